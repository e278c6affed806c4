"""Tests for judging.stats.confidence: vote-fraction confidence and its calibration."""

import numpy as np
import pytest

from core.stats.bootstrap import percentile_interval, resample_indices
from judging.stats.calibration import expected_calibration_error, reliability_bins
from judging.stats.confidence import calibration_report, vote_confidence
from judging.stats.human_judge import MIN_ITEMS

LABELS = ["safe", "unsafe"]


def voting_audit(
    seed: int, n: int = 400, k: int = 5
) -> tuple[list[str | None], dict[str, list[list[str | None]]], list[str]]:
    """Human safety labels; an overconfident judge (always unanimous, 75 % right) and a
    judge whose votes are independent draws with its true accuracy (well calibrated)."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.3
    human: list[str | None] = [LABELS[int(t)] for t in truth]
    sure = truth ^ (rng.random(n) > 0.75)
    overconfident: list[list[str | None]] = [[LABELS[int(s)]] * k for s in sure]
    accuracy = rng.uniform(0.5, 1.0, n)
    honest: list[list[str | None]] = [
        [LABELS[int(t ^ (rng.random() > a))] for _ in range(k)]
        for t, a in zip(truth, accuracy, strict=True)
    ]
    category = [str(v) for v in rng.integers(0, 3, n)]
    return human, {"overconfident": overconfident, "honest": honest}, category


def test_vote_confidence_majority_and_positive() -> None:
    """Majority: modal label and its vote fraction (ties to the first label, missing votes
    ignored, no votes → −1/NaN); positive: the positive vote fraction."""
    votes: list[list[str | None]] = [
        ["unsafe", "unsafe", "safe"],
        ["safe", None, "safe"],
        ["safe", "unsafe"],
        [None, None],
    ]
    code, confidence = vote_confidence(votes, LABELS)
    assert code.tolist() == [1, 0, 0, -1]
    np.testing.assert_allclose(confidence, [2 / 3, 1.0, 0.5, np.nan])
    code, confidence = vote_confidence(votes, LABELS, positive="unsafe")
    assert code.tolist() == [1, 1, 1, -1]
    np.testing.assert_allclose(confidence, [2 / 3, 0.0, 0.5, np.nan])
    with pytest.raises(ValueError, match="not in labels"):
        vote_confidence([["maybe"]], LABELS)


def test_ece_and_bins_equal_the_calibration_module() -> None:
    """Unweighted overall and per-category ECE and bins equal calibration.py's on the same
    (confidence, correct) pairs; the overconfident judge has the larger ECE."""
    human, votes, category = voting_audit(0)
    report = calibration_report(
        votes, human, LABELS, groups={"category": category}, n_bins=5, n_replicates=50
    )
    for judge, judge_votes in votes.items():
        code, confidence = vote_confidence(judge_votes, LABELS)
        correct = np.array([LABELS[c] == h for c, h in zip(code, human, strict=True)])
        overall = report[judge].overall
        assert overall.ece.value == pytest.approx(
            expected_calibration_error(confidence, correct, 5), abs=1e-12
        )
        assert overall.ece.n == len(human)
        expected_bins = reliability_bins(confidence, correct, 5)
        assert [b.count for b in overall.bins] == [b.count for b in expected_bins]
        np.testing.assert_allclose(
            [b.accuracy for b in overall.bins], [b.accuracy for b in expected_bins]
        )
        for group in ("0", "1", "2"):
            members = np.array([c == group for c in category])
            value = report[judge].by_group["category"][group].ece.value
            assert value == pytest.approx(
                expected_calibration_error(confidence[members], correct[members], 5)
            )
    assert report["overconfident"].overall.ece.value > report["honest"].overall.ece.value + 0.1


def test_probability_forecast_of_the_positive_class() -> None:
    """With a positive class the outcome is "human said positive" and the confidence is the
    positive vote fraction."""
    human, votes, _ = voting_audit(1)
    report = calibration_report(votes, human, LABELS, positive="unsafe", n_replicates=20)
    _, confidence = vote_confidence(votes["honest"], LABELS, positive="unsafe")
    outcome = np.array([h == "unsafe" for h in human])
    assert report["honest"].overall.ece.value == pytest.approx(
        expected_calibration_error(confidence, outcome)
    )


def test_interval_equals_recomputation_per_replicate_and_weights_apply() -> None:
    """The ECE interval (within strata, weighted) equals the percentile interval of the
    weighted ECE recomputed on each resample; the point estimate is the weighted ECE."""
    human, votes, category = voting_audit(2, n=150)
    weights = np.random.default_rng(3).uniform(0.5, 3.0, 150)
    report = calibration_report(
        votes, human, LABELS, strata=category, item_weights=weights, n_replicates=40, seed=8
    )
    code, confidence = vote_confidence(votes["honest"], LABELS)
    correct = np.array([LABELS[c] == h for c, h in zip(code, human, strict=True)], dtype=float)
    bins = np.minimum((confidence * 10).astype(int), 9)

    def weighted_ece(rows: np.ndarray) -> float:
        w = weights[rows]
        gaps = [
            abs(np.sum(w[bins[rows] == k] * (correct[rows] - confidence[rows])[bins[rows] == k]))
            for k in range(10)
        ]
        return float(sum(gaps) / w.sum())

    replicates = [weighted_ece(draw) for draw in resample_indices(150, 40, 8, category)]
    figure = report["honest"].overall.ece
    assert figure.value == pytest.approx(weighted_ece(np.arange(150)))
    assert (figure.ci_low, figure.ci_high) == pytest.approx(
        percentile_interval(np.array(replicates)), abs=1e-12
    )


def test_items_without_votes_or_human_label_are_left_out_and_small_n_is_flagged() -> None:
    """n counts items with a vote and a human label; fewer than MIN_ITEMS is too small."""
    human: list[str | None] = ["safe"] * 20 + [None] * 5
    votes = {"j": [["safe"]] * 18 + [[None]] * 2 + [["unsafe"]] * 5}
    summary = calibration_report(votes, human, LABELS, n_replicates=10)["j"].overall
    assert summary.ece.n == 18
    assert summary.ece.value == pytest.approx(0.0)
    assert MIN_ITEMS > 18
    assert summary.ece.too_small
