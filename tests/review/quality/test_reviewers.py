"""Reviewer quality figures (pure): hand-computed values, and the item bootstrap's intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from core.stats.agreement import cohen_kappa
from core.stats.bootstrap import index_counts, percentile_interval, resample_indices
from review.quality.reviewers import (
    FieldQuality,
    GoldResult,
    ReviewerQuality,
    Settled,
    Vote,
    kappa,
    median,
    proportion,
    reviewer_quality,
)


def _vote(reviewer: int, unit: int, label: str | None, *, seconds: float = 1.0) -> Vote:
    decision = "reject" if label is None else "accept"
    return Vote(reviewer, unit, {"decision": decision, "c": label}, seconds, label is None)


def _quality(
    votes: list[Vote],
    *,
    settled: Mapping[int, Settled] | None = None,
    gold: Sequence[GoldResult] = (),
    gold_counts: Mapping[int, tuple[int, int]] | None = None,
    skipped: Mapping[int, set[int]] | None = None,
) -> dict[int, ReviewerQuality]:
    figures = reviewer_quality(
        fields=["decision", "c"],
        votes=votes,
        settled=settled or {},
        gold=gold,
        gold_counts=gold_counts or {},
        skipped=skipped or {},
        reviewers=sorted({v.reviewer for v in votes}),
        n_replicates=200,
    )
    return {q.reviewer: q for q in figures}


def _field(quality: ReviewerQuality, name: str) -> FieldQuality:
    return next(f for f in quality.fields if f.field == name)


def test_a_proportion_is_the_share_with_the_bootstrap_interval_of_its_items() -> None:
    outcomes = [True, True, False, True, False, True, True, True]
    figure = proportion(outcomes, n_replicates=500, seed=3)
    x = np.array(outcomes, dtype=float)
    replicates = index_counts(resample_indices(8, 500, 3), 8) @ x / 8
    assert (figure.value, figure.n) == (0.75, 8)
    assert (figure.ci_low, figure.ci_high) == percentile_interval(replicates)
    assert figure.ci_low is not None and figure.ci_high is not None
    assert figure.ci_low < 0.75 < figure.ci_high


def test_a_median_is_bootstrapped_over_the_reviews() -> None:
    values = [4.0, 9.0, 1.0, 30.0, 7.0]
    figure = median(values, n_replicates=400, seed=1)
    replicates = np.median(np.array(values)[resample_indices(5, 400, 1)], axis=1)
    assert (figure.value, figure.n) == (7.0, 5)
    assert (figure.ci_low, figure.ci_high) == percentile_interval(replicates)


def test_no_items_give_no_value_and_n_zero() -> None:
    assert proportion([]).value is None and proportion([]).n == 0
    assert median([]).ci_low is None


def test_kappa_equals_cohens_kappa_worked_by_hand() -> None:
    """Table [[2, 1], [0, 1]]: p_o = 3/4, p_e = 3/4·1/2 + 1/4·1/2 = 1/2, κ = 1/2."""
    first = ["a", "a", "a", "b"]
    second = ["a", "a", "b", "b"]
    figure = kappa(first, second, n_replicates=100)
    assert figure.value == pytest.approx(0.5)
    assert figure.value == pytest.approx(cohen_kappa(first, second, ["a", "b"]))
    assert figure.n == 4


def test_alpha_contribution_is_alpha_minus_alpha_without_the_reviewer() -> None:
    """Labels: unit 10 (1: a, 2: a), unit 12 (1: a, 2: b, 3: b), unit 11 (1: b alone).

    All: coincidences aa=2, ab=ba=1, bb=1; n=5, n_a=3, n_b=2: α = 1 − 4·2/12 = 1/3.
    Without reviewer 2: unit 12 keeps a, b: α = 1 − 1·2/2 = 0; so reviewer 2 adds 1/3.
    Reviewer 1's removal leaves only b, b on unit 12: α undefined, so no value.
    """
    votes = [
        _vote(1, 10, "a"),
        _vote(2, 10, "a"),
        _vote(1, 11, "b"),
        _vote(1, 12, "a"),
        _vote(2, 12, "b"),
        _vote(3, 12, "b"),
    ]
    quality = _quality(votes)
    second = _field(quality[2], "c").alpha_contribution
    assert second.value == pytest.approx(1 / 3) and second.n == 2
    assert second.ci_low is not None and second.ci_high is not None
    assert second.ci_low <= 1 / 3 <= second.ci_high
    first = _field(quality[1], "c").alpha_contribution
    assert first.value is None and first.n == 2


def test_agreement_with_the_outcome_leaves_out_outcomes_resting_on_the_own_vote() -> None:
    """Unit 1: reviewer 1 alone (k = 1); unit 2: adjudicated by reviewer 1 themselves; unit 3:
    consensus with reviewer 2; unit 4: adjudicated by a lead (9) against reviewer 1."""
    votes = [
        _vote(1, 1, "a"),
        _vote(1, 2, "a"),
        _vote(1, 3, "a"),
        _vote(2, 3, "a"),
        _vote(1, 4, "a"),
    ]
    settled = {
        1: Settled({"decision": "accept", "c": "a"}),
        2: Settled({"decision": "accept", "c": "b"}, adjudicated_by=1),
        3: Settled({"decision": "accept", "c": "a"}),
        4: Settled({"decision": "accept", "c": "b"}, adjudicated_by=9),
    }
    figure = _field(_quality(votes, settled=settled)[1], "c").outcome_agreement
    assert (figure.value, figure.n) == (0.5, 2)


def test_a_rejection_has_no_label_and_counts_for_the_reject_rate() -> None:
    votes = [_vote(1, 1, None), _vote(1, 2, "a"), _vote(2, 1, "a"), _vote(2, 2, "a")]
    quality = _quality(
        votes,
        settled={1: Settled({"decision": "reject", "c": None}, adjudicated_by=9)},
        skipped={1: {3}},
    )
    first = quality[1]
    assert first.reject_rate.value == 0.5
    assert first.skip_rate.value == pytest.approx(1 / 3) and first.skip_rate.n == 3
    assert _field(first, "c").outcome_agreement.n == 0
    assert _field(first, "decision").outcome_agreement.value == 1.0


def test_gold_accuracy_is_per_field_and_in_full() -> None:
    gold = [
        GoldResult(1, {"decision": True, "c": True}),
        GoldResult(1, {"decision": True, "c": False}),
        GoldResult(1, {"decision": False, "c": False}),
    ]
    quality = _quality([_vote(1, 1, "a")], gold=gold, gold_counts={1: (1, 3)})[1]
    assert quality.gold_accuracy.value == pytest.approx(1 / 3)
    assert quality.gold_accuracy.n == 3
    assert _field(quality, "decision").gold_accuracy.value == pytest.approx(2 / 3)
    assert _field(quality, "c").gold_accuracy.value == pytest.approx(1 / 3)
