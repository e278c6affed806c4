"""The pure rules of review/consensus.py: reviewable fields, value checks, consensus."""

from __future__ import annotations

import pytest

from review import consensus
from review.consensus import Verdict

TAXONOMY = consensus.Taxonomy(
    groups={"ooc", "shifted_ic"},
    categories={"VFP": "ooc", "MP": "shifted_ic"},
    scenarios={"math"},
)


def test_consensus_verifies_identical_accepts_with_their_values() -> None:
    """Every reviewer accepting the same values verifies the sample with those values."""
    values = {"category_code": "MP", "answerability_group": "shifted_ic"}
    result = consensus.consensus([Verdict("a", "accept", values), Verdict("b", "accept", values)])
    assert result == consensus.Consensus("verified", True, values)


def test_consensus_sends_different_values_to_adjudication() -> None:
    """Two accepts with different corrections are a disagreement."""
    result = consensus.consensus(
        [Verdict("a", "accept", {"scenario": "math"}), Verdict("b", "accept", {"scenario": "x"})]
    )
    assert result.status == "needs_adjudication"
    assert result.agreement is False


def test_consensus_rejects_when_all_reject_whatever_the_reasons() -> None:
    """A rejection agreed by all rejects the sample, reasons listed by frequency."""
    result = consensus.consensus(
        [
            Verdict("a", "reject", {}, "duplicate"),
            Verdict("b", "reject", {}, "invalid"),
            Verdict("c", "reject", {}, "duplicate"),
        ]
    )
    assert result.status == "rejected"
    assert result.reject_reasons == ("duplicate", "invalid")


def test_consensus_of_accept_and_reject_needs_adjudication() -> None:
    """One accept and one reject cannot settle the sample."""
    result = consensus.consensus(
        [Verdict("a", "accept", {}), Verdict("b", "reject", {}, "invalid")]
    )
    assert result.status == "needs_adjudication"


def test_consensus_needs_a_verdict() -> None:
    """An empty list of verdicts is a programming error."""
    with pytest.raises(ValueError, match="at least one"):
        consensus.consensus([])


def test_check_values_names_each_taxonomy_problem() -> None:
    """Unknown codes and a category outside its group are reported per edited field."""
    problems = consensus.check_values(
        "image_question",
        {"category_code": "MP", "scenario": "nope"},
        current={"answerability_group": "ooc", "category_code": "VFP", "scenario": "math"},
        taxonomy=TAXONOMY,
    )
    assert [(p.field, p.code) for p in problems] == [
        ("category_code", "category_not_in_group"),
        ("scenario", "unknown_scenario"),
    ]
    assert (
        consensus.check_values(
            "image_question",
            {"answerability_group": "ooc", "category_code": "VFP"},
            current={},
            taxonomy=TAXONOMY,
        )
        == []
    )


def test_a_value_outside_the_taxonomy_that_nobody_edited_is_not_a_problem() -> None:
    """Only edits are checked: a stored category that is not a term stays acceptable while
    the reviewer corrects another field; editing the group checks the category it keeps."""
    current = {"answerability_group": "ooc", "category_code": "legacy", "scenario": "odd"}
    assert (
        consensus.check_values(
            "image_question", {"explanation": "fixed"}, current=current, taxonomy=TAXONOMY
        )
        == []
    )
    mismatch = consensus.check_values(
        "image_question",
        {"answerability_group": "shifted_ic"},
        current={**current, "category_code": "VFP"},
        taxonomy=TAXONOMY,
    )
    assert [p.code for p in mismatch] == ["category_not_in_group"]


def test_a_dataset_without_terms_takes_any_text() -> None:
    """With no terms for a field, any value is accepted (free text)."""
    problems = consensus.check_values(
        "image_question",
        {"category_code": "inductive", "scenario": "spatial", "answerability_group": "x"},
        current={},
        taxonomy=consensus.Taxonomy(),
    )
    assert problems == []


def test_check_values_of_trimodal_labels_and_predicates() -> None:
    """A tri-modal label is safe or unsafe; an unsafe scenario cannot lose all its
    conditions; safety categories and subcategories follow the taxonomy."""
    taxonomy = consensus.Taxonomy(safety_categories={"physical_harm": {"fire"}, "social": set()})
    unsafe = {"safety_label": "unsafe", "predicate": ["a"], "safety_category": "physical_harm"}
    problems = consensus.check_values(
        "trimodal", {"safety_label": "maybe"}, current=unsafe, taxonomy=taxonomy
    )
    assert [p.code for p in problems] == ["unknown_safety_label"]
    problems = consensus.check_values(
        "trimodal", {"predicate": []}, current=unsafe, taxonomy=taxonomy
    )
    assert [p.code for p in problems] == ["empty_predicate"]
    problems = consensus.check_values(
        "trimodal",
        {"safety_category": "nope", "safety_subcategory": "fire"},
        current=unsafe,
        taxonomy=taxonomy,
    )
    assert [p.code for p in problems] == ["unknown_safety_category"]
    problems = consensus.check_values(
        "trimodal", {"safety_subcategory": "theft"}, current=unsafe, taxonomy=taxonomy
    )
    assert [p.code for p in problems] == ["unknown_safety_subcategory"]


def test_changing_the_label_of_a_scenario_without_a_predicate_needs_no_predicate() -> None:
    """A safe scenario with no conditions may become unsafe (or stay without conditions)."""
    current = {"safety_label": "safe", "predicate": []}
    for proposed in ({"safety_label": "unsafe"}, {"safety_label": "unsafe", "predicate": []}):
        changes = consensus.edits("trimodal", current, proposed)
        assert changes == {"safety_label": "unsafe"}
        assert (
            consensus.check_values(
                "trimodal", changes, current=current, taxonomy=consensus.Taxonomy()
            )
            == []
        )


def test_edits_are_the_fields_that_differ_from_the_sample() -> None:
    """A field sent as the sample holds it (spaces aside) is no edit; a changed one is."""
    current = {"category_code": "deductive", "scenario": "", "explanation": "why "}
    proposed = {"category_code": "deductive", "scenario": "", "explanation": "why"}
    assert consensus.edits("image_question", current, proposed) == {}
    assert consensus.edits("image_question", current, {"scenario": "x"}) == {"scenario": "x"}
    assert consensus.edits("trimodal", {"predicate": ["a"]}, {"predicate": [" a", ""]}) == {}


def test_an_untouched_accept_and_a_correction_disagree_two_untouched_accepts_agree() -> None:
    """Consensus compares what reviewers set: no edit against an edit is a disagreement."""
    untouched = Verdict("a", "accept", {})
    corrected = Verdict("b", "accept", {"category_code": "MP"})
    assert consensus.consensus([untouched, corrected]).status == "needs_adjudication"
    agreed = consensus.consensus([untouched, Verdict("c", "accept", {})])
    assert agreed == consensus.Consensus("verified", True, {})


def test_normalise_values_keeps_only_reviewable_fields_and_cleans_conditions() -> None:
    """Other fields are dropped, text is stripped, empty conditions disappear."""
    clean = consensus.normalise_values(
        "trimodal", {"predicate": [" a ", "", "b"], "question": "x", "safety_label": " safe "}
    )
    assert clean == {"predicate": ["a", "b"], "safety_label": "safe"}
