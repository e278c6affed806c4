"""Tests for judging.stats.ppi: prediction-powered inference for a mean."""

import numpy as np
import pytest

from judging.stats.ppi import Stratum, ppi_mean, ppi_mean_stratified


def biased_judge(rng: np.random.Generator, n: int, big_n: int) -> tuple[np.ndarray, ...]:
    """Human scores Y and a lenient, noisy judge Ŷ (bias +0.4) on labelled and unlabelled items."""
    truth = rng.normal(2.0, 1.0, n + big_n)
    judge = truth + 0.4 + rng.normal(0.0, 0.5, n + big_n)
    return truth[:n], judge[:n], judge[n:], truth


@pytest.mark.parametrize("lam", [1.0, None])
def test_matches_ppi_python(lam: float | None) -> None:
    """Estimate and interval equal the authors' ppi_py (classic λ = 1 and power-tuned)."""
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(0)
    y, yhat, yhat_unl, _ = biased_judge(rng, 120, 2000)
    ours = ppi_mean(y, yhat, yhat_unl, alpha=0.1, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_unl, alpha=0.1, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_unl, lam=lam)
    assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert (ours.ci_low, ours.ci_high) == pytest.approx(
        (float(np.ravel(low)[0]), float(np.ravel(high)[0])), abs=1e-9
    )


def test_closed_form() -> None:
    """θ̂ = mean(Ŷ_unl) + mean(Y − Ŷ); se² = Var(Ŷ_unl)/N + Var(Y − Ŷ)/n (ddof 0)."""
    y, yhat, unl = [1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0, 1.0]
    result = ppi_mean(y, yhat, unl)
    assert result.estimate == pytest.approx(0.8 + 0.0)
    expected_se = np.sqrt(np.var(unl) / 5 + np.var([0.0, -1.0, 0.0, 1.0]) / 4)
    assert result.se == pytest.approx(expected_se)
    assert result.ci_high - result.estimate == pytest.approx(1.959963984540054 * expected_se)


def test_interval_covers_the_true_mean_about_95_percent() -> None:
    """Over 400 seeded simulations the 95 % PPI interval covers the population mean about
    95 % of the time, while the judge-only mean (biased by +0.4) essentially never does."""
    rng = np.random.default_rng(2023)
    covered = judge_only_covered = 0
    for _ in range(400):
        y, yhat, yhat_unl, _ = biased_judge(rng, 200, 2000)
        result = ppi_mean(y, yhat, yhat_unl)
        covered += result.ci_low <= 2.0 <= result.ci_high
        naive_se = yhat_unl.std() / np.sqrt(yhat_unl.size)
        judge_only_covered += abs(yhat_unl.mean() - 2.0) <= 1.96 * naive_se
    assert 0.92 <= covered / 400 <= 0.98
    assert judge_only_covered / 400 < 0.05


def test_stratified_is_weighted_sum_of_strata() -> None:
    """The stratified estimate is Σ w_s θ̂_s with se² = Σ w_s² se_s²; one stratum = plain."""
    rng = np.random.default_rng(1)
    a = biased_judge(rng, 50, 400)
    b = biased_judge(rng, 80, 300)
    first, second = ppi_mean(a[0], a[1], a[2]), ppi_mean(b[0], b[1], b[2])
    combined = ppi_mean_stratified(
        [Stratum(a[0], a[1], a[2], weight=0.2), Stratum(b[0], b[1], b[2], weight=0.8)]
    )
    assert combined.estimate == pytest.approx(0.2 * first.estimate + 0.8 * second.estimate)
    assert combined.se == pytest.approx(np.hypot(0.2 * first.se, 0.8 * second.se))
    alone = ppi_mean_stratified([Stratum(a[0], a[1], a[2])])
    assert alone.estimate == pytest.approx(first.estimate)
    assert alone.ci_low == pytest.approx(first.ci_low)


def test_stratified_default_weights_are_population_sizes() -> None:
    """Without weights each stratum counts by its labelled + unlabelled size."""
    s1 = Stratum([1.0, 1.0], [1.0, 1.0], [1.0] * 8)  # 10 items, mean 1
    s2 = Stratum([0.0] * 5, [0.0] * 5, [0.0] * 25)  # 30 items, mean 0
    assert ppi_mean_stratified([s1, s2]).estimate == pytest.approx(0.25)
    with pytest.raises(ValueError, match="every stratum or for none"):
        ppi_mean_stratified([Stratum([1.0], [1.0], [1.0], weight=1.0), s2])


def test_invalid_input_is_rejected() -> None:
    """Mismatched lengths, empty inputs and NaN are errors."""
    with pytest.raises(ValueError, match="same length"):
        ppi_mean([1.0, 2.0], [1.0], [1.0])
    with pytest.raises(ValueError, match="non-empty"):
        ppi_mean([], [], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        ppi_mean([1.0], [np.nan], [1.0])
