"""Tests for judging.stats.score_interval: a leaderboard cell's 95 % interval from its sums,
against scipy and the direct formula, on simulated data (coverage at the nominal level) and
as n grows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from judging.stats.score_interval import (
    MISSING_N,
    MISSING_NOT_RECOMPUTED,
    WILSON,
    WILSON_EFFECTIVE_N,
    Z,
    effective_n,
    score_interval,
    wilson,
)

# Scores as the leaderboard has them: quarters averaged over up to three judges.
GRID = sorted({(a + b + c) / 3 for a in range(5) for b in range(5) for c in range(5)})
scores = st.lists(st.sampled_from([x / 4 for x in GRID]), min_size=2, max_size=200)


def _sums(values: list[float]) -> tuple[int, float, float, int]:
    return (
        len(values),
        sum(values),
        sum(x * x for x in values),
        sum(1 for x in values if x in (0.0, 1.0)),
    )


def test_z_is_scipys_normal_quantile() -> None:
    assert float(stats.norm.ppf(0.975)) == pytest.approx(Z, abs=1e-15)


@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_is_scipys(case: tuple[int, int]) -> None:
    """Wilson's interval equals scipy's ``binomtest(...).proportion_ci(method="wilson")``."""
    k, n = case
    expected = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    assert wilson(k / n, n) == pytest.approx((expected.low, expected.high), abs=1e-9)


@given(scores)
def test_the_effective_n_interval_solves_wilsons_score_equation(values: list[float]) -> None:
    """Direct formula: the bounds μ are the roots of (p̂ − μ)² = z² μ(1 − μ) / n_eff, with
    n_eff = n p̂(1 − p̂) / s² from the scores themselves (numpy's variance, ddof 1)."""
    n, total, squares, binary = _sums(values)
    data = np.array(values)
    p = float(data.mean())
    found = score_interval(n, total, squares, binary)
    if binary == n:
        assert found.method == WILSON
        return
    assert found.method == WILSON_EFFECTIVE_N
    variance = float(data.var(ddof=1))
    n_eff = n * p * (1 - p) / variance if variance > 1e-12 else n
    assert effective_n(n, total, squares) == pytest.approx(n_eff, rel=1e-6)
    assert found.low is not None and found.high is not None
    assert found.low < p < found.high
    for mu in (found.low, found.high):
        assert (p - mu) ** 2 == pytest.approx(Z * Z * mu * (1 - mu) / n_eff, rel=1e-6, abs=1e-12)


def test_equal_scores_take_the_widest_spread_not_rounding_noise() -> None:
    """Thirds do not add up exactly, and equal scores show no spread: the interval is that of
    n responses scoring 0 or 1, never a point."""
    values = [1 / 3] * 30
    found = score_interval(*_sums(values))
    assert (found.low, found.high) == pytest.approx(wilson(1 / 3, 30))


def test_the_method_follows_the_scores_and_none_below_two_responses() -> None:
    """All 0 or 1: Wilson's; any other score: Wilson's at the effective n; n < 2 or no
    squares: none, and why."""
    assert score_interval(*_sums([1.0, 0.0, 1.0])).method == WILSON
    assert score_interval(*_sums([1.0, 0.5, 1.0])).method == WILSON_EFFECTIVE_N
    for n in (0, 1):
        none = score_interval(n, float(n), float(n), n)
        assert (none.low, none.high, none.method, none.missing) == (None, None, None, MISSING_N)
    old = score_interval(5, 2.0, None, None)
    assert (old.low, old.method, old.missing) == (None, None, MISSING_NOT_RECOMPUTED)
    all_ones = score_interval(*_sums([1.0] * 10))
    assert all_ones.high == 1.0 and 0.6 < (all_ones.low or 0.0) < 0.75  # 0.722, not [1, 1]


@pytest.mark.parametrize("p", [0.3, 0.5, 0.8])
def test_wilson_covers_the_proportion_at_the_nominal_level(p: float) -> None:
    """4,000 simulated cells of 60 responses scoring 0 or 1: coverage 95 % ± 2 points."""
    rng = np.random.default_rng(7)
    hits = 0
    for k in rng.binomial(60, p, size=4000):
        found = score_interval(60, float(k), float(k), 60)
        assert found.method == WILSON and found.low is not None and found.high is not None
        hits += found.low <= p <= found.high
    assert abs(hits / 4000 - 0.95) < 0.02


@pytest.mark.parametrize(
    "weights",
    [[1, 1, 1, 1, 1], [6, 1, 1, 1, 3], [1, 0, 0, 2, 8], [0, 0, 0, 1, 20], [10, 1, 0, 0, 0]],
)
def test_the_interval_of_fractional_scores_covers_the_mean_at_the_nominal_level(
    weights: list[int],
) -> None:
    """4,000 simulated cells of 40 responses scoring quarters (weights of 0, ¼, ½, ¾, 1),
    means from 0.02 to 0.99: coverage at most 2 points below 95 %, at most 3 above (near 0
    or 1 it errs on the safe side, as Wilson's does)."""
    rng = np.random.default_rng(11)
    levels = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    prob = np.array(weights, dtype=float) / sum(weights)
    truth = float(levels @ prob)
    hits = 0
    for row in rng.choice(levels, size=(4000, 40), p=prob):
        found = score_interval(*_sums([float(x) for x in row]))
        assert found.low is not None and found.high is not None
        hits += found.low <= truth <= found.high
    assert 0.93 <= hits / 4000 <= 0.98


@given(scores, st.integers(1, 5), st.integers(1, 5))
def test_more_responses_like_these_never_widen_the_interval(
    values: list[float], a: int, b: int
) -> None:
    """The same scores counted m times: the interval is no wider for the larger m."""
    small, large = sorted((a, b))

    def width(m: int) -> float:
        found = score_interval(*_sums(values * m))
        assert found.low is not None and found.high is not None
        return found.high - found.low

    assert width(large) <= width(small) + 1e-12


@given(st.integers(2, 3000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_narrows_as_n_grows_at_the_same_proportion(case: tuple[int, int]) -> None:
    """k of n and 2k of 2n: the larger cell's interval is narrower, and inside [0, 1]."""
    k, n = case
    low1, high1 = wilson(k / n, n)
    low2, high2 = wilson(k / n, 2 * n)
    assert 0.0 <= low2 <= high2 <= 1.0
    assert high2 - low2 < high1 - low1
