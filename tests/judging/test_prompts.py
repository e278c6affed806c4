"""Tests for judging.prompts: versioned templates and rendering."""

from __future__ import annotations

import pytest

from judging.prompts import (
    MMOOC_SCORING_V1,
    PROMPTS,
    TEXT_ONLY_NOTE,
    PromptTemplate,
    get_prompt,
    render,
)

FIELDS = {
    "question": "What brand is the watch?",
    "reference_answer": "i can't answer",
    "reference_reasoning": "No logo is visible.",
    "response": "I cannot tell; the watch face is hidden.",
}


def test_v1_of_every_task_is_registered() -> None:
    """answerability, mmooc_scoring and mcbench_safety ship a v1."""
    assert set(PROMPTS) >= {
        ("answerability", "v1"),
        ("mmooc_scoring", "v1"),
        ("mcbench_safety", "v1"),
    }
    assert get_prompt("mmooc_scoring").key == "mmooc_scoring@v1"


def test_unknown_prompt_names_the_known_ones() -> None:
    """Asking for a missing version lists what exists."""
    with pytest.raises(KeyError, match="mmooc_scoring@v1"):
        get_prompt("mmooc_scoring", "v9")


def test_scoring_prompt_carries_the_fields_and_asks_for_json() -> None:
    """The MMOOC prompt gives question, references and response and asks for JSON only."""
    rendered = render(MMOOC_SCORING_V1, FIELDS)
    for value in FIELDS.values():
        assert value in rendered.user
    assert '"answer_score"' in rendered.user
    assert '"reasoning_score"' in rendered.user
    assert "JSON only" in rendered.user
    assert "refus" in rendered.system
    assert "{" not in rendered.system


def test_json_example_in_every_template_survives_formatting() -> None:
    """Doubled braces render as literal JSON braces, with no stray placeholders."""
    for template in PROMPTS.values():
        fields = {name: f"<{name}>" for name in template.placeholders()}
        rendered = render(template, fields)
        example = rendered.user[rendered.user.index("{") :]
        assert example.startswith('{"')
        assert example.rstrip().endswith("}")


def test_missing_fields_are_all_named() -> None:
    """Rendering without required fields names every missing one."""
    with pytest.raises(ValueError, match="question, reference_answer"):
        render(MMOOC_SCORING_V1, {"response": "x", "reference_reasoning": "y"})


def test_text_only_variant_adds_the_note_and_descriptions() -> None:
    """Text-only judges are told they cannot see the media and get the descriptions."""
    fields = {**FIELDS, "image_description": "A man's wrist, watch face turned away."}
    rendered = render(MMOOC_SCORING_V1, fields, text_only=True)
    assert TEXT_ONLY_NOTE in rendered.system
    assert "Image description: A man's wrist" in rendered.user
    plain = render(MMOOC_SCORING_V1, fields)
    assert TEXT_ONLY_NOTE not in plain.system
    assert "Image description" not in plain.user


def test_templates_are_immutable() -> None:
    """A template cannot be edited in place; a change must ship as a new version."""
    template = PromptTemplate("t", "v1", "s", "u {x}")
    with pytest.raises(AttributeError):
        template.user = "changed"  # type: ignore[misc]
    assert template.placeholders() == {"x"}
