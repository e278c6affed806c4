"""Calibration of judge confidences: expected calibration error and reliability-diagram bins.

Bins are equal-width on [0, 1]: bin k holds confidences in [k/M, (k+1)/M), the last bin also
holds 1.0. ECE = Σ_k (n_k / n) · |accuracy_k − mean confidence_k| over non-empty bins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from core.stats.ratings import FloatArray


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability diagram; confidence and accuracy are NaN when empty."""

    lower: float
    upper: float
    confidence: float
    accuracy: float
    count: int


def _validated(confidences: npt.ArrayLike, correct: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    conf = np.asarray(confidences, dtype=np.float64)
    hits = np.asarray(correct, dtype=np.float64)
    if conf.shape != hits.shape or conf.ndim != 1:
        raise ValueError("confidences and correct must be 1-D and of the same length")
    if conf.size and (np.isnan(conf).any() or conf.min() < 0.0 or conf.max() > 1.0):
        raise ValueError("confidences must lie in [0, 1]")
    return conf, hits


def reliability_bins(
    confidences: npt.ArrayLike,
    correct: npt.ArrayLike,
    n_bins: int = 10,
) -> list[ReliabilityBin]:
    """Mean confidence, accuracy and count in each of ``n_bins`` equal-width bins."""
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    conf, hits = _validated(confidences, correct)
    which = np.minimum((conf * n_bins).astype(np.int64), n_bins - 1)
    counts = np.bincount(which, minlength=n_bins)
    conf_sum = np.bincount(which, weights=conf, minlength=n_bins)
    hit_sum = np.bincount(which, weights=hits, minlength=n_bins)
    bins = []
    for k in range(n_bins):
        n = int(counts[k])
        bins.append(
            ReliabilityBin(
                lower=k / n_bins,
                upper=(k + 1) / n_bins,
                confidence=float(conf_sum[k] / n) if n else float("nan"),
                accuracy=float(hit_sum[k] / n) if n else float("nan"),
                count=n,
            )
        )
    return bins


def expected_calibration_error(
    confidences: npt.ArrayLike,
    correct: npt.ArrayLike,
    n_bins: int = 10,
) -> float:
    """Expected calibration error with equal-width bins; NaN for no predictions."""
    bins = reliability_bins(confidences, correct, n_bins)
    total = sum(b.count for b in bins)
    if total == 0:
        return float("nan")
    return float(sum(b.count / total * abs(b.accuracy - b.confidence) for b in bins if b.count))
