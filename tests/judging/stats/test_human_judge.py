"""Tests for judging.stats.human_judge: human vs judge figures with item-bootstrap intervals."""

import time

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from core.stats import agreement as ag
from core.stats.bootstrap import percentile_interval, resample_indices
from core.stats.ratings import from_labels
from judging.stats.human_judge import (
    ENSEMBLE,
    HUMAN_HUMAN,
    MIN_ITEMS,
    human_judge_report,
    majority_vote,
    nearest_code,
    percentile_bounds,
)

BINARY = ["answered", "refused"]
SCORES = ["0", "0.25", "0.5", "0.75", "1"]


def binary_audit(
    seed: int, n: int = 300, prevalence: float = 0.2, missing: float = 0.05
) -> tuple[list[str | None], dict[str, list[str | None]], np.random.Generator]:
    """Human refusal labels and three judges of different accuracy, some labels missing."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < prevalence
    human: list[str | None] = [BINARY[int(t)] for t in truth]
    judges = {}
    for name, accuracy in (("gpt4o", 0.92), ("o1", 0.85), ("o3", 0.75)):
        said = truth ^ (rng.random(n) > accuracy)
        judges[name] = [None if rng.random() < missing else BINARY[int(s)] for s in said]
    return human, judges, rng


def score_audit(
    seed: int, n: int = 300
) -> tuple[list[str | None], dict[str, list[str | None]], np.random.Generator]:
    """Rationality scores in quarters (the top score never used) with a lenient judge."""
    rng = np.random.default_rng(seed)
    latent = rng.integers(0, 4, n)
    human: list[str | None] = [SCORES[v] for v in latent]
    judges = {}
    for name, shift in (("lenient", 1), ("fair", 0)):
        noisy = np.clip(
            latent + shift * (rng.random(n) < 0.4) + rng.integers(-1, 2, n) * (rng.random(n) < 0.2),
            0,
            3,
        )
        judges[name] = [None if rng.random() < 0.05 else SCORES[v] for v in noisy]
    return human, judges, rng


def both(first: list[str | None], second: list[str | None]) -> tuple[list[str], list[str]]:
    keep = [i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a and b]
    return [first[i] for i in keep], [second[i] for i in keep]  # type: ignore[misc]


def test_binary_figures_equal_sklearn_and_the_agreement_module() -> None:
    """Per judge: kappa as sklearn's (labels=), AC1 and percent agreement as the existing
    two-rater functions, PABAK/prevalence/bias as two_by_two oriented positive-first, the
    confusion matrix with sensitivity and specificity as agreement.confusion."""
    human, judges, _ = binary_audit(0)
    report = human_judge_report(human, judges, BINARY, positive="refused", n_replicates=50)
    for name, labels in judges.items():
        h, j = both(human, labels)
        result = report.overall[name]
        assert result.n == len(h)
        kappa = cohen_kappa_score(h, j, labels=BINARY)
        assert result.cohen_kappa.value == pytest.approx(kappa, abs=1e-12)
        pair = from_labels(list(zip(h, j, strict=True)), categories=BINARY)
        assert result.gwet_ac1.value == pytest.approx(ag.gwet_ac1(pair), abs=1e-12)
        assert result.percent_agreement.value == pytest.approx(ag.percent_agreement(pair))
        table = ag.contingency_table(h, j, ["refused", "answered"])
        indices = ag.two_by_two(table)
        assert result.pabak.value == pytest.approx(indices.pabak)
        assert result.prevalence_index is not None and result.bias_index is not None
        assert result.prevalence_index.value == pytest.approx(indices.prevalence_index)
        assert result.bias_index.value == pytest.approx(indices.bias_index)
        matrix = ag.confusion(h, j, BINARY, "refused")
        np.testing.assert_array_equal(result.confusion, matrix.matrix)
        assert result.sensitivity is not None and result.specificity is not None
        assert result.sensitivity.value == pytest.approx(matrix.sensitivity)
        assert result.specificity.value == pytest.approx(matrix.specificity)
        assert result.sensitivity.n == int(matrix.matrix[1].sum())
        assert result.specificity.n == int(matrix.matrix[0].sum())


def test_ordinal_scores_use_linear_weights_over_the_full_scale() -> None:
    """Weighted kappa equals sklearn's linear kappa with labels= (the unused top score still
    spaces the scale); the mean signed difference is judge − human on the score values."""
    human, judges, _ = score_audit(1)
    report = human_judge_report(human, judges, SCORES, scale="ordinal", n_replicates=50)
    for name, labels in judges.items():
        h, j = both(human, labels)
        expected = cohen_kappa_score(h, j, labels=SCORES, weights="linear")
        assert report.overall[name].cohen_kappa.value == pytest.approx(expected, abs=1e-12)
        msd = report.overall[name].mean_signed_difference
        assert msd is not None
        assert msd.value == pytest.approx(
            ag.mean_signed_difference([float(x) for x in h], [float(x) for x in j])
        )
        assert report.overall[name].prevalence_index is None
    lenient = report.overall["lenient"].mean_signed_difference
    assert lenient is not None and lenient.ci_low > 0


def test_majority_vote_and_tie_rule() -> None:
    """The most frequent judge label wins; a tie gives no label, or ``tie_code`` when given;
    an item nobody rated has no label; ties are counted."""
    codes = np.array([[0, 0, 1], [0, 1, -1], [-1, -1, -1], [1, -1, -1]])
    winner, ties = majority_vote(codes, 2)
    assert winner.tolist() == [0, -1, -1, 1]
    assert ties == 1
    winner, _ = majority_vote(codes, 2, tie_code=1)
    assert winner.tolist() == [0, 1, -1, 1]


def test_ensemble_of_labels_and_of_scores() -> None:
    """Label ensemble = majority vote (tie to ``tie_label``); score ensemble = mean score,
    rounded to the nearest scale value (ties down) for the table, unrounded for the MSD."""
    human: list[str | None] = ["refused", "answered", "refused"]
    judges: dict[str, list[str | None]] = {
        "a": ["refused", "answered", "answered"],
        "b": ["refused", "refused", "refused"],
    }
    report = human_judge_report(
        human, judges, BINARY, tie_label="refused", positive="refused", n_replicates=10
    )
    # Items 2 and 3 are ties (one vote each way) and go to "refused".
    np.testing.assert_array_equal(report.overall[ENSEMBLE].confusion, [[0, 1], [0, 2]])
    assert report.ensemble_ties == 2
    assert nearest_code(np.array([0.375, 0.4, np.nan]), np.array([0, 0.25, 0.5])).tolist() == [
        1,
        2,
        -1,
    ]
    scored = human_judge_report(
        ["0", "0.5"],
        {"a": ["0.25", "1"], "b": ["0.5", None]},
        SCORES,
        scale="ordinal",
        n_replicates=10,
    )
    msd = scored.overall[ENSEMBLE].mean_signed_difference
    assert msd is not None
    assert msd.value == pytest.approx(((0.375 - 0) + (1 - 0.5)) / 2)
    # 0.375 is halfway between 0.25 and 0.5 and goes down to 0.25.
    np.testing.assert_array_equal(np.nonzero(scored.overall[ENSEMBLE].confusion), [[0, 2], [1, 4]])


def test_intervals_equal_recomputing_each_replicate_with_sklearn() -> None:
    """The kappa interval (within strata, population-weighted) equals the percentile
    interval of sklearn's weighted kappa recomputed on each resample of items."""
    human, judges, rng = binary_audit(2, n=200)
    strata = [f"s{v}" for v in rng.integers(0, 4, 200)]
    weights = rng.uniform(0.5, 3.0, 200)
    report = human_judge_report(
        human, judges, BINARY, strata=strata, item_weights=weights, n_replicates=60, seed=5
    )
    indices = resample_indices(200, 60, 5, strata)
    h = np.array([x or "" for x in human])
    for name, labels in judges.items():
        j = np.array([x or "" for x in labels])
        values = []
        for draw in indices:
            keep = draw[(h[draw] != "") & (j[draw] != "")]
            values.append(
                cohen_kappa_score(h[keep], j[keep], labels=BINARY, sample_weight=weights[keep])
            )
        low, high = percentile_interval(np.array(values))
        figure = report.overall[name].cohen_kappa
        assert (figure.ci_low, figure.ci_high) == pytest.approx((low, high), abs=1e-12)
        keep_all = (h != "") & (j != "")
        point = cohen_kappa_score(
            h[keep_all], j[keep_all], labels=BINARY, sample_weight=weights[keep_all]
        )
        assert figure.value == pytest.approx(point, abs=1e-12)


def test_breakdowns_are_unweighted_within_groups_and_same_family_is_per_judge() -> None:
    """A group's figure is the plain figure of that group's items, whatever the item
    weights; the same-family split of a judge uses that judge's flags."""
    human, judges, rng = binary_audit(3, n=400)
    category = [str(v) for v in rng.integers(0, 3, 400)]
    family = {"o1": [bool(v) for v in rng.random(400) < 0.3]}
    report = human_judge_report(
        human,
        judges,
        BINARY,
        item_weights=rng.uniform(0.2, 5.0, 400),
        groups={"category": category},
        same_family=family,
        n_replicates=20,
    )
    for group in ("0", "1", "2"):
        members = [i for i, c in enumerate(category) if c == group]
        h, j = both([human[i] for i in members], [judges["o3"][i] for i in members])
        figure = report.breakdowns["category"][group]["o3"].cohen_kappa
        assert figure.value == pytest.approx(cohen_kappa_score(h, j, labels=BINARY))
    assert set(report.breakdowns["category"]["0"]) == {"gpt4o", "o1", "o3", ENSEMBLE}
    same = [i for i, f in enumerate(family["o1"]) if f]
    h, j = both([human[i] for i in same], [judges["o1"][i] for i in same])
    assert report.same_family["o1"][True].n == len(h)
    assert report.same_family["o1"][True].percent_agreement.value == pytest.approx(
        np.mean(np.array(h) == np.array(j))
    )


def test_human_human_uses_double_rated_items_only() -> None:
    """The second human's figures rest on the items both humans rated."""
    human, judges, rng = binary_audit(4, n=300)
    second = [
        (h if rng.random() < 0.9 else BINARY[1 - BINARY.index(h)]) if rng.random() < 0.2 else None
        for h in human
        if h is not None
    ]
    report = human_judge_report(human, judges, BINARY, second_human=second, n_replicates=20)
    h, s = both(human, second)
    assert report.human_human is not None
    assert report.human_human.rater == HUMAN_HUMAN
    assert report.human_human.n == len(h)
    assert report.human_human.cohen_kappa.value == pytest.approx(
        cohen_kappa_score(h, s, labels=BINARY)
    )
    assert HUMAN_HUMAN not in report.overall


def test_same_seed_same_intervals_other_seed_other_intervals() -> None:
    """The bootstrap is seeded."""
    human, judges, _ = binary_audit(5)
    first = human_judge_report(human, judges, BINARY, n_replicates=200, seed=1)
    again = human_judge_report(human, judges, BINARY, n_replicates=200, seed=1)
    other = human_judge_report(human, judges, BINARY, n_replicates=200, seed=2)
    assert first.overall["o1"].cohen_kappa == again.overall["o1"].cohen_kappa
    assert first.overall["o1"].cohen_kappa.ci_low != other.overall["o1"].cohen_kappa.ci_low


def test_too_small_flags_few_items_and_a_rare_minority_class() -> None:
    """Fewer than MIN_ITEMS compared items, or fewer than 5 human positives, are flagged;
    a large audit with enough positives is not."""
    human, judges, _ = binary_audit(6, n=MIN_ITEMS - 1, missing=0.0)
    assert (
        human_judge_report(human, judges, BINARY, n_replicates=10)
        .overall["o1"]
        .cohen_kappa.too_small
    )
    human, judges, _ = binary_audit(7, n=400, prevalence=0.005, missing=0.0)
    rare = human_judge_report(human, judges, BINARY, positive="refused", n_replicates=10)
    assert sum(h == "refused" for h in human) < 5
    assert rare.overall["o1"].cohen_kappa.too_small
    assert rare.overall["o1"].sensitivity is not None and rare.overall["o1"].sensitivity.too_small
    human, judges, _ = binary_audit(8, n=400, prevalence=0.3)
    fine = human_judge_report(human, judges, BINARY, positive="refused", n_replicates=10)
    assert not fine.overall["o1"].cohen_kappa.too_small
    assert fine.overall["o1"].sensitivity is not None
    assert not fine.overall["o1"].sensitivity.too_small


def test_percentile_bounds_equal_percentile_interval_column_by_column() -> None:
    """The vectorised interval equals the reference one, NaN rules included."""
    rng = np.random.default_rng(9)
    values = rng.normal(size=(101, 4))
    values[:30, 1] = np.nan  # 71 % defined: an interval
    values[:60, 2] = np.nan  # 41 % defined: none
    values[:, 3] = np.nan
    low, high = percentile_bounds(values)
    for column in range(4):
        expected = percentile_interval(values[:, column])
        np.testing.assert_allclose((low[column], high[column]), expected, rtol=1e-12)


def test_invalid_input_is_rejected() -> None:
    """Unknown labels, text labels on an ordinal scale and misaligned inputs are errors."""
    with pytest.raises(ValueError, match="not in labels"):
        human_judge_report(["maybe"], {"a": ["refused"]}, BINARY)
    with pytest.raises(ValueError, match="numeric labels"):
        human_judge_report(["refused"], {"a": ["refused"]}, BINARY, scale="ordinal")
    with pytest.raises(ValueError, match="every item"):
        human_judge_report(["refused", "answered"], {"a": ["refused"]}, BINARY)


def test_full_audit_bootstrap_is_fast() -> None:
    """2,000 items × 3 judges, 2,000 replicates, four breakdowns take the resampling shortcut
    (a per-replicate recomputation takes minutes; bench/bench_audit_stats.py times the fast
    way: 0.87 s on a quiet machine)."""
    human, judges, rng = binary_audit(10, n=2000)
    groups = {
        name: [str(v) for v in rng.integers(0, k, 2000)]
        for name, k in (("category", 8), ("format", 3), ("scenario", 6), ("model", 18))
    }
    start = time.perf_counter()
    human_judge_report(
        human,
        judges,
        BINARY,
        positive="refused",
        groups=groups,
        strata=groups["category"],
        item_weights=rng.uniform(0.5, 2, 2000),
    )
    # A bound far from both the fast way (≈ 1 s) and the slow one (minutes), so that a loaded
    # machine cannot fail it: the speed itself is the benchmark's to measure.
    assert time.perf_counter() - start < 30.0
