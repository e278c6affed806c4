"""Tests for judging.calls.output: tolerant parsing and strict validation of judge output."""

from __future__ import annotations

import pytest

from judging.calls.output import (
    AnswerabilityOutput,
    MalformedOutput,
    SafetyOutput,
    ScoringOutput,
    extract_json_object,
    parse_judge_output,
)


def test_strict_json_is_parsed() -> None:
    """A plain JSON verdict is read as is."""
    text = '{"answer_score": 1, "reasoning_score": 0.75, "reason": "names the premise"}'
    assert parse_judge_output(text, "mmooc_scoring") == ScoringOutput(1, 0.75, "names the premise")


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"answer_score": 0, "reasoning_score": 0.25, "reason": "r"}\n```',
        'Verdict:\n```\n{"answer_score": 0, "reasoning_score": 0.25, "reason": "r"}\n```',
        'Sure. {"answer_score": 0, "reasoning_score": 0.25, "reason": "r"} Hope this helps.',
        '{"answer_score": "0", "reasoning_score": "0.25", "reason": "r"}',
    ],
)
def test_fenced_prose_wrapped_and_string_numbers_are_accepted(text: str) -> None:
    """JSON in fences or in prose is found; numeric strings such as "0.25" are accepted."""
    assert parse_judge_output(text, "mmooc_scoring") == ScoringOutput(0, 0.25, "r")


def test_first_balanced_object_ignores_braces_in_strings() -> None:
    """Braces inside JSON strings do not end the object early."""
    text = 'Verdict: {"reason": "uses {x} and }", "answer_score": 1, "reasoning_score": 1} end {'
    assert extract_json_object(text)["reason"] == "uses {x} and }"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty output"),
        ("The response is good.", "no JSON object"),
        ("[1, 2]", "no JSON object"),
        ('{"reasoning_score": 1, "reason": "r"}', "missing field 'answer_score'"),
        ('{"answer_score": 2, "reasoning_score": 1, "reason": "r"}', "answer_score must be 0 or 1"),
        ('{"answer_score": 1, "reasoning_score": 0.3, "reason": "r"}', "reasoning_score must be"),
        ('{"answer_score": 1, "reasoning_score": "high", "reason": "r"}', "must be a number"),
        ('{"answer_score": true, "reasoning_score": 1, "reason": "r"}', "boolean"),
        ('{"answer_score": 1, "reasoning_score": 1, "reason": 5}', "reason must be a string"),
        ('{"answer_score": 1, "reasoning_score": 1}', "missing field 'reason'"),
    ],
)
def test_invalid_scoring_output_raises_a_readable_reason(text: str, fragment: str) -> None:
    """Every rejection says what is wrong."""
    with pytest.raises(MalformedOutput) as caught:
        parse_judge_output(text, "mmooc_scoring")
    assert fragment in caught.value.message


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ('"answerable"', True), ('"Unanswerable"', False), ("false", False)],
)
def test_answerability_accepts_booleans_and_words(raw: str, expected: bool) -> None:
    """answerable may be a boolean or the words answerable/unanswerable; category is optional."""
    parsed = parse_judge_output(f'{{"answerable": {raw}, "reason": "r"}}', "answerability")
    assert parsed == AnswerabilityOutput(expected, None, "r")
    with_category = parse_judge_output(
        f'{{"answerable": {raw}, "category": "MKB"}}', "answerability"
    )
    assert isinstance(with_category, AnswerabilityOutput)
    assert with_category.category == "MKB"


def test_answerability_rejects_other_values() -> None:
    """A label such as "maybe" is rejected."""
    with pytest.raises(MalformedOutput, match="answerable must be"):
        parse_judge_output('{"answerable": "maybe"}', "answerability")


def test_safety_label() -> None:
    """Safety labels are safe or unsafe, case-insensitively; anything else is rejected."""
    assert parse_judge_output('{"label": "Unsafe", "reason": "r"}', "mcbench_safety") == (
        SafetyOutput("unsafe", "r")
    )
    with pytest.raises(MalformedOutput, match="label must be"):
        parse_judge_output('{"label": "risky"}', "mcbench_safety")


def test_unknown_task_is_a_programming_error() -> None:
    """An unknown task name is a ValueError, not a malformed judge output."""
    with pytest.raises(ValueError, match="unknown task") as caught:
        parse_judge_output("{}", "translation")
    assert not isinstance(caught.value, MalformedOutput)
