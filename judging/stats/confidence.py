"""Judge confidence from repeated votes, and its calibration against the human labels.

A judge asked k times about an item gives k votes. Two readings of the votes:

- ``positive=None`` (majority): the prediction is the most frequent label (a tie goes to the
  label listed first in ``labels``, which only matters when the confidence is 1/2 or less);
  confidence = its vote fraction; the outcome is whether the human gave that label.
- ``positive="refused"`` (a probability forecast): confidence = the fraction of votes for
  the positive label; the outcome is whether the human gave the positive label.

Missing votes (None) are ignored; an item with no vote, or without a human label, is left
out. ECE and reliability bins follow :mod:`judging.stats.calibration` (equal-width bins);
population-weighted when ``item_weights`` are given (bin counts stay counts of items), per
group unweighted. The ECE carries a 95 % item-bootstrap interval (within strata when given)
and ``too_small`` when it rests on fewer than ``MIN_ITEMS`` items.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import sparse

from core.stats.bootstrap import index_counts, resample_indices
from core.stats.ratings import FloatArray, IntArray
from judging.stats.calibration import ReliabilityBin
from judging.stats.human_judge import MIN_ITEMS, Figure, percentile_bounds


def vote_confidence(
    votes: Sequence[Sequence[str | None]],
    labels: Sequence[str],
    positive: str | None = None,
) -> tuple[IntArray, FloatArray]:
    """(predicted label code, confidence) per item; code −1 and NaN where nobody voted.

    With ``positive`` the predicted code is the positive label's wherever any vote was cast
    and the confidence is the positive vote fraction.
    """
    index = {label: i for i, label in enumerate(labels)}
    q = len(labels)
    counts = np.zeros((len(votes), q))
    for i, row in enumerate(votes):
        for label in row:
            if label is None or label == "":
                continue
            if label not in index:
                raise ValueError(f"vote {label!r} is not in labels")
            counts[i, index[label]] += 1.0
    cast = counts.sum(axis=1)
    voted = cast > 0
    if positive is not None:
        k = index[positive]
        code = np.where(voted, k, -1)
        share = counts[:, k]
    else:
        code = np.where(voted, counts.argmax(axis=1), -1)  # argmax: first label wins ties
        share = counts.max(axis=1)
    confidence = np.where(voted, share / np.where(voted, cast, 1.0), np.nan)
    return code.astype(np.int64), confidence


@dataclass(frozen=True)
class CalibrationSummary:
    """ECE with its interval and n, and the reliability-diagram bins (n per bin)."""

    ece: Figure
    bins: tuple[ReliabilityBin, ...]


@dataclass(frozen=True)
class JudgeCalibration:
    """Calibration of one judge overall and per group of every attribute."""

    judge: str
    overall: CalibrationSummary
    by_group: dict[str, dict[str, CalibrationSummary]]


def _bin_of(confidence: FloatArray, n_bins: int) -> IntArray:
    return np.minimum((np.nan_to_num(confidence) * n_bins).astype(np.int64), n_bins - 1)


def _block(
    usable: npt.NDArray[np.bool_],
    bins: IntArray,
    confidence: FloatArray,
    hits: FloatArray,
    group: IntArray,
    n_groups: int,
    n_bins: int,
    weights: FloatArray,
) -> sparse.csr_matrix:
    """Items × (groups · bins · 3) matrix of [weight, weight·confidence, weight·hit]."""
    rows = np.flatnonzero(usable & (group >= 0))
    base = (group[rows] * n_bins + bins[rows]) * 3
    w = weights[rows]
    return sparse.csr_matrix(
        (
            np.concatenate([w, w * confidence[rows], w * hits[rows]]),
            (np.tile(rows, 3), np.concatenate([base, base + 1, base + 2])),
        ),
        shape=(usable.size, n_groups * n_bins * 3),
    )


def _ece(sums: FloatArray) -> FloatArray:
    """ECE from sums of shape (..., bins, 3); NaN with no items."""
    total = sums[..., 0].sum(axis=-1)
    gap = np.abs(sums[..., 2] - sums[..., 1]).sum(axis=-1)
    out = np.full(total.shape, np.nan)
    np.divide(gap, total, out=out, where=total > 0)
    return out


def _summary(
    point: FloatArray, raw: FloatArray, low: float, high: float, n_bins: int
) -> CalibrationSummary:
    bins = []
    for k in range(n_bins):
        weight, conf, hit = point[k]
        count = round(float(raw[k, 0]))
        bins.append(
            ReliabilityBin(
                lower=k / n_bins,
                upper=(k + 1) / n_bins,
                confidence=float(conf / weight) if count else float("nan"),
                accuracy=float(hit / weight) if count else float("nan"),
                count=count,
            )
        )
    n = int(raw[:, 0].sum().round())
    value = float(_ece(point[None])[0])
    if not np.isfinite(value):
        low = high = float("nan")
    return CalibrationSummary(Figure(value, low, high, n, n < MIN_ITEMS), tuple(bins))


def calibration_report(
    votes: Mapping[str, Sequence[Sequence[str | None]]],
    human: Sequence[str | None],
    labels: Sequence[str],
    *,
    positive: str | None = None,
    groups: Mapping[str, Sequence[Hashable | None]] | None = None,
    n_bins: int = 10,
    strata: Sequence[Hashable] | None = None,
    item_weights: npt.ArrayLike | None = None,
    n_replicates: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, JudgeCalibration]:
    """Per judge: ECE (with interval) and reliability bins, overall and per group."""
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    n_items = len(human)
    index = {label: i for i, label in enumerate(labels)}
    unknown = {h for h in human if h and h not in index}
    if unknown:
        raise ValueError(f"human labels {sorted(unknown)} are not in labels")
    truth = np.array([index[h] if h else -1 for h in human], dtype=np.int64)
    base = np.ones(n_items) if item_weights is None else np.asarray(item_weights, dtype=float)
    if base.shape != (n_items,):
        raise ValueError("item_weights must give one weight per item")
    ones = np.ones(n_items)
    layouts: list[tuple[str, tuple[Hashable, ...], IntArray]] = [
        ("overall", ("all",), np.zeros(n_items, dtype=np.int64))
    ]
    for attribute, values in (groups or {}).items():
        if len(values) != n_items:
            raise ValueError(f"group {attribute!r} must give one value per item")
        present = sorted({v for v in values if v is not None}, key=str)
        position = {v: i for i, v in enumerate(present)}
        layouts.append(
            (
                attribute,
                tuple(present),
                np.array([-1 if v is None else position[v] for v in values], dtype=np.int64),
            )
        )
    weighted_blocks, raw_blocks = [], []
    for judge, judge_votes in votes.items():
        if len(judge_votes) != n_items:
            raise ValueError(f"judge {judge!r} must have votes (possibly empty) for every item")
        code, confidence = vote_confidence(judge_votes, labels, positive)
        usable = (code >= 0) & (truth >= 0)
        hits = (code == truth).astype(np.float64)
        bins = _bin_of(confidence, n_bins)
        for attribute, names, group in layouts:
            weights = base if attribute == "overall" else ones
            args = (usable, bins, confidence, hits, group, len(names), n_bins)
            weighted_blocks.append(_block(*args, weights))
            raw_blocks.append(_block(*args, ones))
    weighted = sparse.hstack(weighted_blocks, format="csr")
    raw = (sparse.hstack(raw_blocks, format="csr").T @ ones).reshape(-1, n_bins, 3)
    point = (weighted.T @ ones).reshape(-1, n_bins, 3)
    counts = index_counts(resample_indices(n_items, n_replicates, seed, strata), n_items)
    replicates = np.asarray(weighted.T @ counts.T).T.reshape(n_replicates, -1, n_bins, 3)
    low, high = percentile_bounds(_ece(replicates), level)

    report: dict[str, JudgeCalibration] = {}
    column = 0
    for judge in votes:
        overall: CalibrationSummary | None = None
        by_group: dict[str, dict[str, CalibrationSummary]] = {}
        for attribute, names, _ in layouts:
            for name in names:
                summary = _summary(point[column], raw[column], low[column], high[column], n_bins)
                column += 1
                if attribute == "overall":
                    overall = summary
                else:
                    by_group.setdefault(attribute, {})[str(name)] = summary
        assert overall is not None
        report[judge] = JudgeCalibration(judge, overall, by_group)
    return report
