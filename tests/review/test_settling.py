"""How k reviews settle a sample (review.settling)."""

from __future__ import annotations

import pytest

from review import editing, settling
from review.settling import Verdict

TAXONOMY = editing.Taxonomy(
    groups={"ooc", "shifted_ic"},
    categories={"VFP": "ooc", "MP": "shifted_ic"},
    scenarios={"math"},
)


def test_consensus_verifies_identical_accepts_with_their_values() -> None:
    """Every reviewer accepting the same values verifies the sample with those values."""
    values = {"category_code": "MP", "answerability_group": "shifted_ic"}
    result = settling.consensus([Verdict("a", "accept", values), Verdict("b", "accept", values)])
    assert result == settling.Consensus("verified", True, values)


def test_consensus_sends_different_values_to_adjudication() -> None:
    """Two accepts with different corrections are a disagreement."""
    result = settling.consensus(
        [Verdict("a", "accept", {"scenario": "math"}), Verdict("b", "accept", {"scenario": "x"})]
    )
    assert result.status == "needs_adjudication"
    assert result.agreement is False


def test_consensus_rejects_when_all_reject_whatever_the_reasons() -> None:
    """A rejection agreed by all rejects the sample, reasons listed by frequency."""
    result = settling.consensus(
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
    result = settling.consensus([Verdict("a", "accept", {}), Verdict("b", "reject", {}, "invalid")])
    assert result.status == "needs_adjudication"


def test_consensus_needs_a_verdict() -> None:
    """An empty list of verdicts is a programming error."""
    with pytest.raises(ValueError, match="at least one"):
        settling.consensus([])


def test_an_untouched_accept_and_a_correction_disagree_two_untouched_accepts_agree() -> None:
    """Consensus compares what reviewers set: no edit against an edit is a disagreement."""
    untouched = Verdict("a", "accept", {})
    corrected = Verdict("b", "accept", {"category_code": "MP"})
    assert settling.consensus([untouched, corrected]).status == "needs_adjudication"
    agreed = settling.consensus([untouched, Verdict("c", "accept", {})])
    assert agreed == settling.Consensus("verified", True, {})
