"""Tests for sample validation and the option/answer helpers."""

from typing import Any

import pytest

from annotation.formats.records import MediaRef, ParsedSample
from annotation.formats.validate import (
    TaxonomyView,
    answer_letters,
    extract_options,
    is_refusal,
    normalise_choice_answer,
    validate_sample,
)

MMOOC_TAXONOMY = TaxonomyView(
    groups={"ooc", "shifted_ic"},
    categories={
        "MA": "ooc",
        "MKB": "ooc",
        "ULS": "ooc",
        "USPC": "ooc",
        "VFP": "ooc",
        "IQM": "shifted_ic",
        "MP": "shifted_ic",
        "PA": "shifted_ic",
    },
    formats={"yesno", "mcq", "vqa"},
    scenarios={"coarse_perception", "math"},
)
IMAGE = [MediaRef("image", 0, data=b"png")]


def mcq(**overrides: object) -> ParsedSample:
    values: dict[str, Any] = {
        "row": 1,
        "external_id": "q1",
        "question": "What colour? (A) red (B) blue (C) green (D) grey",
        "question_format": "mcq",
        "options": extract_options("(A) red (B) blue (C) green (D) grey"),
        "reference_answer": "B",
        "answerability_group": "shifted_ic",
        "category_code": "MP",
        "scenario": "coarse_perception",
        "media": IMAGE,
    }
    values.update(overrides)
    return ParsedSample(**values)


def test_valid_sample_has_no_problems() -> None:
    """A consistent MCQ sample passes."""
    assert validate_sample(mcq(), MMOOC_TAXONOMY) == []


def test_unknown_category_code_lists_the_known_codes() -> None:
    """An unknown category code is reported with the codes that are known."""
    problems = validate_sample(mcq(category_code="XYZ"), MMOOC_TAXONOMY)
    assert problems == ["unknown category code 'XYZ' (known: IQM, MA, MKB, MP, PA, ULS, USPC, VFP)"]


def test_category_of_another_group_is_reported() -> None:
    """An OOC category on a shifted in-context sample is a mismatch."""
    problems = validate_sample(mcq(category_code="VFP"), MMOOC_TAXONOMY)
    assert len(problems) == 1
    assert "belongs to the group 'ooc'" in problems[0]


def test_mcq_answer_not_among_options() -> None:
    """An answer letter that is not an option is reported with the options."""
    problems = validate_sample(mcq(reference_answer="E"), MMOOC_TAXONOMY)
    assert problems == ["the answer 'E' is not one of the options A, B, C, D"]


def test_ooc_answer_may_be_a_refusal() -> None:
    """An out-of-context sample may have a refusal as its reference answer."""
    sample = mcq(answerability_group="ooc", category_code="MKB", reference_answer="I can't answer.")
    assert validate_sample(sample, MMOOC_TAXONOMY) == []
    sample.answerability_group, sample.category_code = "shifted_ic", "MP"
    assert validate_sample(sample, MMOOC_TAXONOMY) == [
        "the answer 'I can't answer.' is not an option letter"
    ]


def test_yesno_answer_must_be_yes_or_no() -> None:
    """A yes/no question answered with anything else is reported, unless it is an OOC refusal."""
    sample = mcq(question_format="yesno", options=[], reference_answer="maybe")
    assert validate_sample(sample, MMOOC_TAXONOMY) == ["the answer 'maybe' is not yes or no"]
    sample.reference_answer = "Yes"
    assert validate_sample(sample, MMOOC_TAXONOMY) == []
    sample.answerability_group, sample.category_code = "ooc", "USPC"
    sample.reference_answer = "cannot be determined"
    assert validate_sample(sample, MMOOC_TAXONOMY) == []


def test_required_fields_and_unknown_format_and_scenario() -> None:
    """Missing id, question, image and answer, and unknown format and scenario are reported."""
    sample = mcq(
        external_id="",
        question="",
        reference_answer="",
        media=[],
        question_format="essay",
        scenario="cooking",
    )
    problems = validate_sample(sample, MMOOC_TAXONOMY)
    assert "the sample has no id" in problems
    assert "the question is empty" in problems
    assert "the sample has no image" in problems
    assert "the reference answer is empty" in problems
    assert "unknown question format 'essay' (known: mcq, vqa, yesno)" in problems
    assert "unknown scenario 'cooking' (known: coarse_perception, math)" in problems


def test_empty_taxonomy_constrains_nothing() -> None:
    """With an empty taxonomy any code, format and scenario is accepted."""
    sample = mcq(category_code="XYZ", scenario="anything", answerability_group="other")
    assert validate_sample(sample, TaxonomyView()) == []


def test_trimodal_label_must_be_safe_or_unsafe() -> None:
    """A tri-modal scenario needs a safe/unsafe label and known safety categories."""
    tax = TaxonomyView(safety_categories={"physical_harm": {"fire", "falls"}})
    sample = ParsedSample(
        row=1,
        external_id="s1",
        speech_utterance="Shall I leave the stove on?",
        safety_label="",
        safety_category="physical_harm",
        safety_subcategory="drowning",
    )
    problems = validate_sample(sample, tax)
    assert "the safety label is missing (expected 'safe' or 'unsafe')" in problems
    assert "unknown subcategory 'drowning' of 'physical_harm' (known: falls, fire)" in problems
    sample.safety_label, sample.safety_subcategory = "dangerous", "fire"
    assert validate_sample(sample, tax) == [
        "the safety label 'dangerous' is not 'safe' or 'unsafe'"
    ]
    sample.safety_label = "unsafe"
    assert validate_sample(sample, tax) == []


def test_unknown_pipeline_is_reported() -> None:
    """Provenance pipelines are limited to the three known ones."""
    assert validate_sample(mcq(pipeline="crowd"), MMOOC_TAXONOMY) == [
        "unknown pipeline 'crowd' (known: auto_shuffle, human_designed, mllm_generated)"
    ]


def test_multi_letter_answer_checks_each_letter() -> None:
    """Each letter of "A, E" is checked against the options."""
    assert validate_sample(mcq(reference_answer="A, E"), MMOOC_TAXONOMY) == [
        "the answer 'E' is not one of the options A, B, C, D"
    ]


@pytest.mark.parametrize(
    ("question", "labels", "first_text"),
    [
        ("Pick one. (A) foo (B)bar (C) Insufficient Information", ["A", "B", "C"], "foo"),
        ("Pick:\nA. foo\nB. bar\nC. baz", ["A", "B", "C"], "foo"),
        ("Pick: A) foo B) bar", ["A", "B"], "foo"),
        ("Select from (A), (B), (C). (A) one, (B) two, (C) three.", ["A", "B", "C"], "one"),
        ("Which of the 4 figures presented (A, B, C, D) is a rotation?", [], None),
        ("No options here.", [], None),
    ],
)
def test_extract_options(question: str, labels: list[str], first_text: str | None) -> None:
    """Options are read from the common inline and line-based layouts."""
    options = extract_options(question)
    assert [o["label"] for o in options] == labels
    if first_text is not None:
        assert options[0]["text"] == first_text


def test_answer_letters_and_normalisation() -> None:
    """Letter answers are normalised to "A" or "A, C"; other text is left alone."""
    assert answer_letters("(b)") == ["B"]
    assert normalise_choice_answer("A,C") == "A, C"
    assert normalise_choice_answer("a and c") == "A, C"
    assert normalise_choice_answer(" none of the above ") == "none of the above"
    assert answer_letters("yes") is None


def test_refusal_detection() -> None:
    """Common refusal strings are recognised; real answers are not."""
    for text in ["I can't answer", "None of the above.", "n/a", "Cannot be determined", "无法回答"]:
        assert is_refusal(text), text
    for text in ["yes", "A", "a red car", "nation"]:
        assert not is_refusal(text), text
