"""Tests for core.stats.bootstrap: item resampling from per-item sufficient statistics."""

from itertools import combinations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from core.stats import agreement as ag
from core.stats.bootstrap import (
    COHEN_WEIGHTING,
    bootstrap_figures,
    figures_from_weights,
    index_counts,
    item_statistics,
    percentile_interval,
    resample_indices,
    stratum_weights,
)
from tests.core.stats.test_agreement import random_ratings

SKLEARN_WEIGHTS = {"none": None, "linear": "linear", "quadratic": "quadratic"}


def test_same_seed_gives_identical_intervals() -> None:
    """Two runs with the same seed give identical replicates; another seed does not."""
    ratings = random_ratings(1, n_items=80)
    first = bootstrap_figures(ratings, "ordinal", 300, seed=42)
    second = bootstrap_figures(ratings, "ordinal", 300, seed=42)
    other = bootstrap_figures(ratings, "ordinal", 300, seed=43)
    np.testing.assert_array_equal(
        first.replicates.krippendorff_alpha, second.replicates.krippendorff_alpha
    )
    assert percentile_interval(first.replicates.gwet_ac1) == percentile_interval(
        second.replicates.gwet_ac1
    )
    assert not np.array_equal(
        first.replicates.krippendorff_alpha, other.replicates.krippendorff_alpha
    )


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_fast_bootstrap_equals_per_replicate_recomputation(level: str) -> None:
    """Every figure from weighted sufficient statistics equals recomputing it from the
    resampled ratings with the reference libraries, replicate by replicate, to 1e-9."""
    ratings = random_ratings(5, n_items=40)
    result = bootstrap_figures(ratings, level, 40, seed=7)  # type: ignore[arg-type]
    labels = list(range(ratings.n_categories))
    weighting = SKLEARN_WEIGHTS[COHEN_WEIGHTING[level]]  # type: ignore[index]
    for b, indices in enumerate(result.indices):
        sample = ratings.take(indices)
        values = np.where(
            np.isnan(sample.codes),
            np.nan,
            sample.values[np.nan_to_num(sample.codes).astype(int)],
        )
        reps = result.replicates
        alpha = krippendorff.alpha(values.T, level_of_measurement=level)  # type: ignore[arg-type]
        assert reps.krippendorff_alpha[b] == pytest.approx(alpha, abs=1e-9)
        assert reps.percent_agreement[b] == pytest.approx(ag.percent_agreement(sample), abs=1e-9)
        assert reps.fleiss_kappa[b] == pytest.approx(ag.fleiss_kappa(sample), abs=1e-9)
        assert reps.gwet_ac1[b] == pytest.approx(ag.gwet_ac1(sample), abs=1e-9)
        for a, c in combinations(range(ratings.n_raters), 2):
            both = ~np.isnan(sample.codes[:, a]) & ~np.isnan(sample.codes[:, c])
            kappa = cohen_kappa_score(
                sample.codes[both, a], sample.codes[both, c], labels=labels, weights=weighting
            )
            assert reps.cohen_kappa[(a, c)][b] == pytest.approx(kappa, abs=1e-9)


def test_point_estimates_use_unit_weights() -> None:
    """The point estimates of a bootstrap run are the plain point estimates."""
    ratings = random_ratings(2)
    point = bootstrap_figures(ratings, "nominal", 0).point
    assert point.krippendorff_alpha[0] == pytest.approx(ag.krippendorff_alpha(ratings, "nominal"))
    assert point.fleiss_kappa[0] == pytest.approx(ag.fleiss_kappa(ratings))


def test_stratified_resampling_keeps_stratum_sizes() -> None:
    """Within-stratum resampling draws each stratum's own items, as many as it holds."""
    strata = ["rare"] * 7 + ["common"] * 30 + ["mid"] * 13
    rng = np.random.default_rng(0)
    order = rng.permutation(len(strata))
    shuffled = [strata[i] for i in order]
    indices = resample_indices(len(shuffled), 200, seed=3, strata=shuffled)
    labels = np.array(shuffled)
    for row in indices:
        assert (labels[row] == labels).all()
    drawn_rare = np.isin(indices, np.flatnonzero(labels == "rare"))
    assert (drawn_rare.sum(axis=1) == 7).all()


def test_index_counts_tally_draws() -> None:
    """Each replicate's counts sum to the number of items and match the drawn indices."""
    indices = resample_indices(25, 50, seed=1)
    counts = index_counts(indices, 25)
    assert (counts.sum(axis=1) == 25).all()
    np.testing.assert_array_equal(counts[3], np.bincount(indices[3], minlength=25))


def test_integer_item_weights_equal_duplicated_items() -> None:
    """Weighting items by 2 gives the same figures as listing those items twice."""
    ratings = random_ratings(4, n_items=30)
    weights = np.where(np.arange(30) % 3 == 0, 2.0, 1.0)
    duplicated = ratings.take(np.repeat(np.arange(30), weights.astype(int)))
    stats = item_statistics(ratings, "ordinal")
    weighted = figures_from_weights(stats, weights[None, :])
    assert weighted.krippendorff_alpha[0] == pytest.approx(
        ag.krippendorff_alpha(duplicated, "ordinal"), abs=1e-12
    )
    assert weighted.gwet_ac1[0] == pytest.approx(ag.gwet_ac1(duplicated), abs=1e-12)
    assert weighted.cohen_kappa[(0, 1)][0] == pytest.approx(
        ag.cohen_kappa_pair(duplicated, 0, 1, "linear"), abs=1e-12
    )


def test_stratum_weights_restore_population_shares() -> None:
    """Weights = population share / sample share, so a weighted mean is population-level."""
    strata = ["rare"] * 50 + ["common"] * 50
    weights = stratum_weights(strata, {"rare": 0.05, "common": 0.95})
    assert weights[0] == pytest.approx(0.1)
    assert weights[-1] == pytest.approx(1.9)
    rates = np.array([0.2] * 50 + [0.9] * 50)
    assert np.average(rates, weights=weights) == pytest.approx(0.05 * 0.2 + 0.95 * 0.9)
    with pytest.raises(ValueError, match="no population share"):
        stratum_weights(["x"], {"y": 1.0})


def test_percentile_interval_needs_enough_defined_replicates() -> None:
    """Intervals come from finite replicates and are NaN when most replicates are undefined."""
    values = np.arange(1001, dtype=float)
    low, high = percentile_interval(values)
    assert (low, high) == pytest.approx((25.0, 975.0))
    mostly_nan = np.concatenate([np.full(60, np.nan), np.ones(40)])
    assert all(np.isnan(percentile_interval(mostly_nan)))
