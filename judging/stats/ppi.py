"""Prediction-powered inference for a mean (Angelopoulos et al., 2023, Science 382).

θ̂ = mean(λ·Ŷ_unlabelled) + mean(Y − λ·Ŷ_labelled): the judge's mean on the unlabelled items,
corrected by the judge's error measured on the human-rated items. The normal-approximation
interval uses the population (ddof = 0) variances, as the authors' ``ppi_py.ppi_mean_ci``
does. λ = 1 is classic PPI; ``lam=None`` picks the variance-minimising λ of PPI++
(Angelopoulos, Duchi & Zrnic, 2023), clipped to [0, 1], again as ``ppi_py`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from core.stats.ratings import FloatArray


@dataclass(frozen=True)
class PPIEstimate:
    """Point estimate, standard error and two-sided normal interval."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    lam: float
    n_labelled: int
    n_unlabelled: int


def _vector(values: npt.ArrayLike, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must not contain NaN or infinity")
    return array


def power_tuning(y: FloatArray, yhat: FloatArray, yhat_unlabelled: FloatArray) -> float:
    """PPI++ λ = Cov(Y, Ŷ) / ((1 + n/N) · Var(Ŷ over all items)), clipped to [0, 1]."""
    n, big_n = y.size, yhat_unlabelled.size
    covariance = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    variance = float(np.var(np.concatenate([yhat, yhat_unlabelled]), ddof=1))
    if variance <= 0.0:
        return 0.0
    return float(np.clip(covariance / ((1.0 + n / big_n) * variance), 0.0, 1.0))


def ppi_mean(
    y: npt.ArrayLike,
    yhat: npt.ArrayLike,
    yhat_unlabelled: npt.ArrayLike,
    alpha: float = 0.05,
    lam: float | None = 1.0,
) -> PPIEstimate:
    """Prediction-powered estimate and (1 − alpha) interval for the mean of Y."""
    labelled = _vector(y, "y")
    predicted = _vector(yhat, "yhat")
    unlabelled = _vector(yhat_unlabelled, "yhat_unlabelled")
    if labelled.size != predicted.size:
        raise ValueError("y and yhat must have the same length")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie in (0, 1)")
    weight = power_tuning(labelled, predicted, unlabelled) if lam is None else float(lam)
    rectifier = labelled - weight * predicted
    estimate = float(np.mean(weight * unlabelled) + np.mean(rectifier))
    se = float(
        np.sqrt(np.var(weight * unlabelled) / unlabelled.size + np.var(rectifier) / labelled.size)
    )
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    return PPIEstimate(
        estimate, se, estimate - z * se, estimate + z * se, weight, labelled.size, unlabelled.size
    )


@dataclass(frozen=True)
class Stratum:
    """The labelled and unlabelled parts of one stratum; weight is its population share."""

    y: npt.ArrayLike
    yhat: npt.ArrayLike
    yhat_unlabelled: npt.ArrayLike
    weight: float | None = None


def ppi_mean_stratified(
    strata: Sequence[Stratum], alpha: float = 0.05, lam: float | None = 1.0
) -> PPIEstimate:
    """Σ_s w_s θ̂_s with se = sqrt(Σ_s w_s² se_s²); strata are independent.

    Weights are normalised to sum to 1. Without weights a stratum's population share is
    taken as its share of labelled + unlabelled items (the whole population is split into
    the rated subset and the rest).
    """
    if not strata:
        raise ValueError("at least one stratum is needed")
    given = [s.weight for s in strata]
    if any(w is None for w in given) and any(w is not None for w in given):
        raise ValueError("give a weight for every stratum or for none")
    if given[0] is None:
        raw = np.array(
            [np.size(s.y) + np.size(s.yhat_unlabelled) for s in strata], dtype=np.float64
        )
    else:
        raw = np.array([float(w) for w in given if w is not None])
    if (raw < 0).any() or raw.sum() <= 0:
        raise ValueError("stratum weights must be non-negative and not all zero")
    shares = raw / raw.sum()
    parts = [ppi_mean(s.y, s.yhat, s.yhat_unlabelled, alpha, lam) for s in strata]
    estimate = float(sum(w * p.estimate for w, p in zip(shares, parts, strict=True)))
    se = float(np.sqrt(sum(w**2 * p.se**2 for w, p in zip(shares, parts, strict=True))))
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    return PPIEstimate(
        estimate,
        se,
        estimate - z * se,
        estimate + z * se,
        float(np.dot(shares, [p.lam for p in parts])),
        sum(p.n_labelled for p in parts),
        sum(p.n_unlabelled for p in parts),
    )
