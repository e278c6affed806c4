"""Benchmark scores per evaluated model, judge-only and corrected by the human audit (PPI).

Input, one row per judged response: the evaluated model, the judge-based score (e.g. the
ensemble's mean score), the human score where the response was audited (NaN elsewhere) and,
when the audit was stratified, the response's stratum.

- Uncorrected: the mean judge score over all of the model's responses, with the normal
  interval mean ± z·s/√N (s with ddof 1). It is only as right as the judge is unbiased.
- Corrected: prediction-powered inference (:mod:`judging.stats.ppi`): labelled = the
  model's audited responses (human score Y, judge score Ŷ), unlabelled = its other
  responses. Stratified when strata are given, each stratum weighted by its share of the
  model's responses (the population share), so oversampled strata are weighted back. A
  stratum of the model with fewer than ``MIN_PER_STRATUM`` audited responses makes the
  stratified estimate impossible; the model then falls back to unstratified PPI and says so
  in ``warnings`` (that fallback is biased if the audit over-sampled some strata).
- ``too_small``: fewer than ``MIN_AUDITED`` audited responses of the model.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from judging.stats.ppi import PPIEstimate, Stratum, ppi_mean, ppi_mean_stratified

MIN_AUDITED = 30
MIN_PER_STRATUM = 2


@dataclass(frozen=True)
class Interval:
    """An estimate with its (1 − alpha) normal interval and n."""

    estimate: float
    ci_low: float
    ci_high: float
    n: int


@dataclass(frozen=True)
class CorrectedScore:
    """One evaluated model: judge-only score beside the audit-corrected one."""

    model: str
    n_responses: int
    n_audited: int
    uncorrected: Interval
    corrected: PPIEstimate | None
    stratified: bool
    too_small: bool
    warnings: tuple[str, ...]


# A benchmark score (MMOOC's overall score, MCBench's share of safe answers) lies in [0, 1].
SCORE_RANGE = (0.0, 1.0)


def _bounded(value: float) -> float:
    """A score, or an end of its interval, within SCORE_RANGE (NaN stays NaN).

    A normal interval around a mean near 0 or 1 on a few items reaches past the range (and
    a PPI estimate can too); the score cannot, so the interval is cut at the range, which
    keeps its coverage.
    """
    return value if math.isnan(value) else min(max(value, SCORE_RANGE[0]), SCORE_RANGE[1])


def _bounded_ppi(estimate: PPIEstimate) -> PPIEstimate:
    return replace(
        estimate,
        estimate=_bounded(estimate.estimate),
        ci_low=_bounded(estimate.ci_low),
        ci_high=_bounded(estimate.ci_high),
    )


def _uncorrected(scores: npt.NDArray[np.float64], z: float) -> Interval:
    mean = float(scores.mean())
    se = float(scores.std(ddof=1) / np.sqrt(scores.size)) if scores.size > 1 else float("nan")
    return Interval(
        _bounded(mean), _bounded(mean - z * se), _bounded(mean + z * se), int(scores.size)
    )


def _split(
    judge: npt.NDArray[np.float64], human: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    audited = ~np.isnan(human)
    return human[audited], judge[audited], judge[~audited]


def corrected_scores(
    models: Sequence[str],
    judge_scores: npt.ArrayLike,
    human_scores: npt.ArrayLike,
    strata: Sequence[Hashable] | None = None,
    alpha: float = 0.05,
    lam: float | None = 1.0,
) -> list[CorrectedScore]:
    """Uncorrected and PPI-corrected mean score of every evaluated model, sorted by name.

    Responses without a judge score (NaN) are dropped and counted in ``warnings``. A model
    whose responses were all audited has no unlabelled part; its corrected score is then the
    plain human mean (λ = 0 in PPI terms) with the classical interval.
    """
    judge = np.asarray(judge_scores, dtype=np.float64)
    human = np.asarray(human_scores, dtype=np.float64)
    if judge.shape != (len(models),) or human.shape != (len(models),):
        raise ValueError("models, judge_scores and human_scores must have the same length")
    if strata is not None and len(strata) != len(models):
        raise ValueError("strata must give one stratum per response")
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    model_array = np.asarray(models, dtype=object)
    stratum_array = (
        np.asarray([str(s) for s in strata], dtype=object) if strata is not None else None
    )
    results = []
    for model in sorted(set(models)):
        rows = np.flatnonzero(model_array == model)
        warnings: list[str] = []
        missing = np.isnan(judge[rows])
        if missing.any():
            warnings.append(f"{int(missing.sum())} responses without a judge score left out")
            rows = rows[~missing]
        if rows.size == 0:
            continue
        y, yhat, unlabelled = _split(judge[rows], human[rows])
        corrected: PPIEstimate | None = None
        stratified = False
        if y.size == 0:
            warnings.append("no audited responses: no corrected score")
        elif unlabelled.size == 0:
            mean = float(y.mean())
            se = float(y.std() / np.sqrt(y.size))
            corrected = PPIEstimate(mean, se, mean - z * se, mean + z * se, 0.0, y.size, 0)
        elif stratum_array is not None:
            parts = []
            for stratum in sorted(set(stratum_array[rows].tolist())):
                members = rows[stratum_array[rows] == stratum]
                sy, syhat, sunl = _split(judge[members], human[members])
                parts.append((stratum, sy, syhat, sunl, members.size))
            thin = [s for s, sy, _, sunl, _ in parts if sy.size < MIN_PER_STRATUM and sunl.size]
            if thin:
                warnings.append(
                    f"strata with fewer than {MIN_PER_STRATUM} audited responses "
                    f"({', '.join(thin[:5])}{', …' if len(thin) > 5 else ''}): unstratified PPI"
                )
            else:
                stratified = True
                # A fully audited stratum has no unlabelled part; its judge scores stand in
                # for it, which keeps the estimate at the human mean (λ = 1) and only
                # widens the interval.
                corrected = ppi_mean_stratified(
                    [
                        Stratum(sy, syhat, sunl if sunl.size else syhat, weight=size)
                        for _, sy, syhat, sunl, size in parts
                    ],
                    alpha,
                    lam,
                )
        if corrected is None and y.size and unlabelled.size:
            corrected = ppi_mean(y, yhat, unlabelled, alpha, lam)
        too_small = y.size < MIN_AUDITED
        if too_small and y.size:
            warnings.append(f"only {y.size} audited responses (< {MIN_AUDITED})")
        results.append(
            CorrectedScore(
                model=model,
                n_responses=int(rows.size),
                n_audited=int(y.size),
                uncorrected=_uncorrected(judge[rows], z),
                corrected=None if corrected is None else _bounded_ppi(corrected),
                stratified=stratified,
                too_small=too_small,
                warnings=tuple(warnings),
            )
        )
    return results
