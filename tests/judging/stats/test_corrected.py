"""Tests for judging.stats.corrected: judge-only vs PPI-corrected scores per evaluated model."""

import numpy as np
import pytest

from judging.stats.corrected import MIN_AUDITED, corrected_scores
from judging.stats.ppi import Stratum, ppi_mean_stratified


def responses(
    rng: np.random.Generator, n: int, audited: int, bias: float = 0.15
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True (human) correctness, a lenient judge that calls 'bias' of the wrong answers
    right, and human scores revealed on a simple random audit of ``audited`` responses."""
    truth = (rng.random(n) < 0.6).astype(float)
    judge = np.where((truth == 0) & (rng.random(n) < bias / 0.4), 1.0, truth)
    judge = np.where(rng.random(n) < 0.05, 1.0 - judge, judge)  # some noise both ways
    human = np.full(n, np.nan)
    chosen = rng.choice(n, audited, replace=False)
    human[chosen] = truth[chosen]
    return truth, judge, human


def test_corrected_equals_ppi_python() -> None:
    """Unstratified, the corrected estimate and interval equal the authors' ppi_py (classic
    λ = 1) on the model's audited (labelled) and other (unlabelled) responses."""
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(0)
    _, judge, human = responses(rng, 3000, 150)
    (result,) = corrected_scores(["m"] * 3000, judge, human)
    audited = ~np.isnan(human)
    low, high = ppi_py.ppi_mean_ci(
        human[audited], judge[audited], judge[~audited], alpha=0.05, lam=1.0
    )
    point = ppi_py.ppi_mean_pointestimate(human[audited], judge[audited], judge[~audited], lam=1.0)
    assert result.corrected is not None
    assert result.corrected.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert (result.corrected.ci_low, result.corrected.ci_high) == pytest.approx(
        (float(np.ravel(low)[0]), float(np.ravel(high)[0])), abs=1e-9
    )
    assert result.n_audited == 150 and result.n_responses == 3000 and not result.stratified


def test_uncorrected_is_the_judge_mean_with_a_normal_interval() -> None:
    """mean ± 1.96 · s/√N over all of the model's judge scores, s with ddof 1, cut at the
    score's range [0, 1]."""
    judge = np.array([1.0, 0.0, 1.0, 1.0, 0.5])
    (result,) = corrected_scores(["m"] * 5, judge, [np.nan] * 5)
    half = 1.959963984540054 * judge.std(ddof=1) / np.sqrt(5)
    assert result.uncorrected.estimate == pytest.approx(0.7)
    assert result.uncorrected.ci_low == pytest.approx(0.7 - half)
    assert 0.7 + half > 1 and result.uncorrected.ci_high == 1.0
    assert result.corrected is None and result.too_small
    assert "no audited responses" in result.warnings[0]


def test_models_are_separate_and_stratified_ppi_weights_by_population_share() -> None:
    """Each model uses only its own responses; with strata the estimate is the stratified
    PPI with each stratum weighted by its share of the model's responses."""
    rng = np.random.default_rng(1)
    _, judge_a, human_a = responses(rng, 1000, 100)
    _, judge_b, human_b = responses(rng, 500, 80)
    strata_a = ["x" if i < 700 else "y" for i in range(1000)]
    models = ["a"] * 1000 + ["b"] * 500
    results = corrected_scores(
        models,
        np.r_[judge_a, judge_b],
        np.r_[human_a, human_b],
        strata=strata_a + ["z"] * 500,
    )
    assert [r.model for r in results] == ["a", "b"]
    parts = []
    for rows in (slice(0, 700), slice(700, 1000)):
        j, h = judge_a[rows], human_a[rows]
        audited = ~np.isnan(h)
        parts.append(Stratum(h[audited], j[audited], j[~audited], weight=j.size))
    expected = ppi_mean_stratified(parts)
    first = results[0]
    assert first.stratified and first.corrected is not None
    assert first.corrected.estimate == pytest.approx(expected.estimate)
    assert first.corrected.se == pytest.approx(expected.se)
    assert results[1].n_responses == 500 and results[1].n_audited == 80


def test_a_stratum_without_audited_responses_falls_back_with_a_warning() -> None:
    """A stratum with fewer than two audited responses cannot be corrected on its own: the
    model falls back to unstratified PPI and says so."""
    rng = np.random.default_rng(2)
    _, judge, human = responses(rng, 400, 60)
    strata = ["x"] * 390 + ["thin"] * 10
    human[390:] = np.nan
    (result,) = corrected_scores(["m"] * 400, judge, human, strata=strata)
    assert not result.stratified and result.corrected is not None
    assert any("thin" in w for w in result.warnings)


def test_few_audited_responses_are_flagged() -> None:
    """Fewer than MIN_AUDITED audited responses: too_small with a warning."""
    rng = np.random.default_rng(3)
    _, judge, human = responses(rng, 500, MIN_AUDITED - 1)
    (result,) = corrected_scores(["m"] * 500, judge, human)
    assert result.too_small and any("audited" in w for w in result.warnings)
    _, judge, human = responses(rng, 500, MIN_AUDITED)
    assert not corrected_scores(["m"] * 500, judge, human)[0].too_small


def test_corrected_interval_covers_the_truth_where_the_biased_judge_does_not() -> None:
    """Over 300 seeded audits of a stratified population (oversampled small stratum where
    the judge is most lenient), the stratified PPI interval covers the true mean about 95 %
    of the time; the judge-only interval almost never does, and PPI that ignores the
    strata (so over-weights the oversampled stratum) falls well short."""
    rng = np.random.default_rng(2023)
    covered = naive_covered = unstratified_covered = 0
    runs = 300
    for _ in range(runs):
        truth_big, judge_big, _ = responses(rng, 3000, 0, bias=0.1)
        truth_small, judge_small, _ = responses(rng, 600, 0, bias=0.35)
        truth = np.r_[truth_big, truth_small]
        judge = np.r_[judge_big, judge_small]
        strata = ["big"] * 3000 + ["small"] * 600
        human = np.full(3600, np.nan)
        for rows, n in ((np.arange(3000), 120), (np.arange(3000, 3600), 80)):
            chosen = rng.choice(rows, n, replace=False)
            human[chosen] = truth[chosen]
        (result,) = corrected_scores(["m"] * 3600, judge, human, strata=strata)
        assert result.corrected is not None and result.stratified
        covered += result.corrected.ci_low <= truth.mean() <= result.corrected.ci_high
        naive_covered += result.uncorrected.ci_low <= truth.mean() <= result.uncorrected.ci_high
        (flat,) = corrected_scores(["m"] * 3600, judge, human)
        assert flat.corrected is not None
        unstratified_covered += flat.corrected.ci_low <= truth.mean() <= flat.corrected.ci_high
    assert 0.91 <= covered / runs <= 0.99
    assert naive_covered / runs < 0.05
    assert unstratified_covered / runs < 0.85
