"""The pure rules of review/consensus.py: reviewable fields, value checks, consensus."""

from __future__ import annotations

import pytest

from review import consensus
from review.consensus import Verdict

TAXONOMY = {
    "groups": {"ooc", "shifted_ic"},
    "categories": {"VFP": "ooc", "MP": "shifted_ic"},
    "scenarios": {"math"},
}


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
    """Unknown codes and a category outside its group are reported per field."""
    problems = consensus.check_values(
        "image_question",
        {"answerability_group": "ooc", "category_code": "MP", "scenario": "nope"},
        **TAXONOMY,
    )
    assert [(p.field, p.code) for p in problems] == [
        ("category_code", "category_not_in_group"),
        ("scenario", "unknown_scenario"),
    ]
    assert (
        consensus.check_values(
            "image_question", {"answerability_group": "ooc", "category_code": "VFP"}, **TAXONOMY
        )
        == []
    )


def test_check_values_of_trimodal_labels_and_predicates() -> None:
    """A tri-modal review needs a safe/unsafe label and at least one condition."""
    problems = consensus.check_values(
        "trimodal",
        {"safety_label": "maybe", "predicate": []},
        groups=set(),
        categories={},
        scenarios=set(),
    )
    assert [p.code for p in problems] == ["unknown_safety_label", "empty_predicate"]


def test_normalise_values_keeps_only_reviewable_fields_and_cleans_conditions() -> None:
    """Other fields are dropped, text is stripped, empty conditions disappear."""
    clean = consensus.normalise_values(
        "trimodal", {"predicate": [" a ", "", "b"], "question": "x", "safety_label": " safe "}
    )
    assert clean == {"predicate": ["a", "b"], "safety_label": "safe"}
