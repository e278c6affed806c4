"""Point estimates of agreement: percent agreement, Krippendorff's alpha, Fleiss, Gwet, Cohen.

Every coefficient is computed from per-item sufficient statistics summed with item weights
(``*_from_sums`` / ``*_from_table`` functions, vectorised over leading replicate axes), so the
bootstrap in :mod:`core.stats.bootstrap` reuses exactly these formulas. Undefined values
(one category only, no pairable items) come out as NaN.

Conventions, matching the reference implementations:
- Percent agreement is Gwet's p_a: per item, the share of agreeing ordered rater pairs,
  averaged over items with at least two ratings.
- Krippendorff's alpha uses the coincidence matrix; items with a single rating are dropped.
- Fleiss' kappa and Gwet's AC1/AC2 follow irrCAC's ``fleiss.kappa.raw`` / ``gwet.ac1.raw``:
  chance agreement uses every item rated at least once, agreement only items rated twice.
- Cohen's kappa spaces categories by their rank in the full category list (as scikit-learn
  does when ``labels=`` is passed), so unseen categories still count in the weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from core.stats.ratings import FloatArray, Level, Ratings

Weighting = Literal["identity", "linear", "quadratic"]
CohenWeighting = Literal["none", "linear", "quadratic"]

# Column layout of the per-item Gwet/Fleiss statistics (see ``gwet_item_stats``).
HAS_TWO, AGREEMENT, HAS_ONE, FIRST_SHARE = 0, 1, 2, 3


def _safe_ratio(
    numerator: FloatArray | np.float64 | float, denominator: FloatArray | np.float64 | float
) -> FloatArray:
    """Elementwise ratio, NaN where the denominator is (numerically) zero."""
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    ok = np.abs(den) > 1e-12
    np.divide(num, den, out=out, where=ok)
    return out


# --- Krippendorff's alpha ---------------------------------------------------------------


def item_coincidences(counts: FloatArray) -> FloatArray:
    """Per-item coincidence matrices (items × q × q); zero for items with < 2 ratings."""
    m = counts.sum(axis=1)
    pairs = counts[:, :, None] * counts[:, None, :]
    idx = np.arange(counts.shape[1])
    pairs[:, idx, idx] -= counts
    scale = np.where(m >= 2, 1.0 / np.maximum(m - 1.0, 1.0), 0.0)
    return pairs * scale[:, None, None]


def _distances(marginals: FloatArray, values: FloatArray, level: Level) -> FloatArray:
    """Squared-difference metric δ²(c, k), shape (..., q, q)."""
    q = values.shape[0]
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(q), (*marginals.shape[:-1], q, q))
    if level == "interval":
        diff = values[:, None] - values[None, :]
        return np.broadcast_to(diff**2, (*marginals.shape[:-1], q, q))
    # Ordinal: δ = Σ_{g=c..k} n_g − (n_c + n_k)/2, i.e. the difference of mid-ranks.
    midrank = np.cumsum(marginals, axis=-1) - marginals / 2.0
    return (midrank[..., :, None] - midrank[..., None, :]) ** 2


def alpha_from_coincidences(
    coincidences: FloatArray, values: FloatArray, level: Level
) -> FloatArray:
    """Alpha from summed coincidence matrices of shape (..., q, q)."""
    marginals = coincidences.sum(axis=-1)
    total = marginals.sum(axis=-1)
    delta = _distances(marginals, values, level)
    observed = (coincidences * delta).sum(axis=(-2, -1))
    expected = (marginals[..., :, None] * marginals[..., None, :] * delta).sum(axis=(-2, -1))
    alpha: FloatArray = 1.0 - (total - 1.0) * _safe_ratio(observed, expected)
    return alpha


def krippendorff_alpha(ratings: Ratings, level: Level = "nominal") -> float:
    """Krippendorff's alpha at the given level; missing ratings allowed."""
    coincidences = item_coincidences(ratings.category_counts()).sum(axis=0)
    return float(alpha_from_coincidences(coincidences, ratings.values, level))


# --- Fleiss' kappa and Gwet's AC1/AC2 ----------------------------------------------------


def agreement_weights(values: FloatArray, kind: Weighting = "identity") -> FloatArray:
    """Gwet's agreement weights (1 on the diagonal) over the category values."""
    q = values.shape[0]
    if kind == "identity" or q < 2:
        return np.eye(q)
    span = float(values.max() - values.min())
    diff = np.abs(values[:, None] - values[None, :])
    if kind == "linear":
        return 1.0 - diff / span
    return 1.0 - (diff / span) ** 2


def gwet_item_stats(counts: FloatArray, weights: FloatArray) -> FloatArray:
    """Per-item columns [rated ≥ 2, p_a of the item, rated ≥ 1, r_ik / r_i for each k]."""
    r = counts.sum(axis=1)
    weighted = counts @ weights.T
    has_two = r >= 2
    pair_agreement = (counts * (weighted - 1.0)).sum(axis=1)
    per_item = np.where(has_two, pair_agreement / np.where(has_two, r * (r - 1.0), 1.0), 0.0)
    shares = counts / np.where(r > 0, r, 1.0)[:, None]
    return np.column_stack([has_two, per_item, r > 0, shares]).astype(np.float64)


def chance_corrected_from_sums(
    sums: FloatArray, weights: FloatArray, method: Literal["fleiss", "gwet"]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(p_a, p_e, coefficient) from summed ``gwet_item_stats`` of shape (..., 3 + q)."""
    pa = _safe_ratio(sums[..., AGREEMENT], sums[..., HAS_TWO])
    pi = (
        sums[..., FIRST_SHARE:]
        / np.where(sums[..., HAS_ONE] > 0, sums[..., HAS_ONE], 1.0)[..., None]
    )
    q = weights.shape[0]
    if method == "fleiss":
        pe = np.einsum("...k,kl,...l->...", pi, weights, pi)
    elif q >= 2:
        pe = weights.sum() * (pi * (1.0 - pi)).sum(axis=-1) / (q * (q - 1))
    else:
        pe = np.ones_like(pa)
    return pa, pe, _safe_ratio(pa - pe, 1.0 - pe)


def _chance_corrected(
    ratings: Ratings, kind: Weighting, method: Literal["fleiss", "gwet"]
) -> float:
    weights = agreement_weights(ratings.values, kind)
    sums = gwet_item_stats(ratings.category_counts(), weights).sum(axis=0)
    return float(chance_corrected_from_sums(sums, weights, method)[2])


def percent_agreement(ratings: Ratings) -> float:
    """Share of agreeing rater pairs per item, averaged over items with ≥ 2 ratings."""
    weights = np.eye(ratings.n_categories)
    sums = gwet_item_stats(ratings.category_counts(), weights).sum(axis=0)
    return float(chance_corrected_from_sums(sums, weights, "fleiss")[0])


def fleiss_kappa(ratings: Ratings, weights: Weighting = "identity") -> float:
    """Fleiss' kappa generalised to missing ratings (irrCAC ``fleiss.kappa.raw``)."""
    return _chance_corrected(ratings, weights, "fleiss")


def gwet_ac1(ratings: Ratings) -> float:
    """Gwet's AC1 (irrCAC ``gwet.ac1.raw``); q is the size of the full category list."""
    return _chance_corrected(ratings, "identity", "gwet")


def gwet_ac2(ratings: Ratings, weights: Weighting = "quadratic") -> float:
    """Gwet's AC2: AC1 with agreement weights over the category values."""
    return _chance_corrected(ratings, weights, "gwet")


# --- Cohen's kappa and 2×2 indices -------------------------------------------------------


def disagreement_weights(q: int, weighting: CohenWeighting) -> FloatArray:
    """Cohen's disagreement weights over category ranks (0 on the diagonal)."""
    ranks = np.arange(q, dtype=np.float64)
    diff = np.abs(ranks[:, None] - ranks[None, :])
    if weighting == "none":
        return (diff > 0).astype(np.float64)
    return diff if weighting == "linear" else diff**2


def cohen_kappa_from_table(table: FloatArray, weighting: CohenWeighting = "none") -> FloatArray:
    """Cohen's kappa from contingency tables of shape (..., q, q) (rows: first rater)."""
    q = table.shape[-1]
    weights = disagreement_weights(q, weighting)
    total = table.sum(axis=(-2, -1))
    expected = (
        table.sum(axis=-1)[..., :, None]
        * table.sum(axis=-2)[..., None, :]
        / np.where(total > 0, total, 1.0)[..., None, None]
    )
    observed = (table * weights).sum(axis=(-2, -1))
    chance = (expected * weights).sum(axis=(-2, -1))
    return 1.0 - _safe_ratio(observed, chance)


def contingency_table(
    first: Sequence[str | None], second: Sequence[str | None], labels: Sequence[str]
) -> FloatArray:
    """q × q counts over items both rated; labels fix the rows/columns (unseen ones too)."""
    if len(first) != len(second):
        raise ValueError("both raters must rate the same items")
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for a, b in zip(first, second, strict=True):
        if a is None or b is None or a == "" or b == "":
            continue
        if a not in index or b not in index:
            raise ValueError(f"label {a if a not in index else b!r} is not in labels")
        table[index[a], index[b]] += 1.0
    return table


def cohen_kappa(
    first: Sequence[str | None],
    second: Sequence[str | None],
    labels: Sequence[str],
    weighting: CohenWeighting = "none",
) -> float:
    """Cohen's kappa of two label sequences over an explicit, ordered label list."""
    return float(cohen_kappa_from_table(contingency_table(first, second, labels), weighting))


def pair_table(ratings: Ratings, first: int, second: int) -> FloatArray:
    """Contingency table of two raters (columns of ``ratings``) over items both rated."""
    a, b = ratings.codes[:, first], ratings.codes[:, second]
    both = ~np.isnan(a) & ~np.isnan(b)
    q = ratings.n_categories
    flat = np.bincount(
        a[both].astype(np.int64) * q + b[both].astype(np.int64), minlength=q * q
    ).astype(np.float64)
    return flat.reshape(q, q)


def cohen_kappa_pair(
    ratings: Ratings, first: int, second: int, weighting: CohenWeighting = "none"
) -> float:
    """Cohen's kappa between two raters (column indices) of ``ratings``."""
    return float(cohen_kappa_from_table(pair_table(ratings, first, second), weighting))


@dataclass(frozen=True)
class TwoByTwo:
    """Byrt, Bishop & Carlin (1993) indices of a 2×2 table [[a, b], [c, d]]."""

    n: int
    observed_agreement: float
    kappa: float
    pabak: float
    prevalence_index: float
    bias_index: float


def pabak(table: FloatArray) -> float:
    """Prevalence-adjusted bias-adjusted kappa, (q·p_o − 1)/(q − 1); 2·p_o − 1 for 2×2."""
    q = table.shape[0]
    total = table.sum()
    if total == 0 or q < 2:
        return float("nan")
    po = np.trace(table) / total
    return float((q * po - 1.0) / (q - 1.0))


def two_by_two(table: FloatArray | Sequence[Sequence[float]]) -> TwoByTwo:
    """Kappa, PABAK and the signed prevalence (a − d)/n and bias (b − c)/n indices."""
    cells = np.asarray(table, dtype=np.float64)
    if cells.shape != (2, 2):
        raise ValueError("expected a 2×2 table")
    (a, b), (c, d) = cells
    n = cells.sum()
    if n == 0:
        raise ValueError("the table is empty")
    return TwoByTwo(
        n=int(n),
        observed_agreement=float((a + d) / n),
        kappa=float(cohen_kappa_from_table(cells)),
        pabak=pabak(cells),
        prevalence_index=float((a - d) / n),
        bias_index=float((b - c) / n),
    )


@dataclass(frozen=True)
class Confusion:
    """Confusion matrix (rows: reference, columns: predicted) and one-vs-rest rates."""

    labels: tuple[str, ...]
    matrix: FloatArray
    positive: str
    sensitivity: float
    specificity: float
    n: int


def confusion(
    reference: Sequence[str | None],
    predicted: Sequence[str | None],
    labels: Sequence[str],
    positive: str,
) -> Confusion:
    """Confusion matrix with sensitivity and specificity of the ``positive`` class."""
    if positive not in labels:
        raise ValueError(f"positive class {positive!r} is not in labels")
    matrix = contingency_table(reference, predicted, labels)
    k = list(labels).index(positive)
    true_pos = matrix[k, k]
    actual_pos = matrix[k, :].sum()
    actual_neg = matrix.sum() - actual_pos
    true_neg = actual_neg - (matrix[:, k].sum() - true_pos)
    return Confusion(
        labels=tuple(labels),
        matrix=matrix,
        positive=positive,
        sensitivity=float(_safe_ratio(np.float64(true_pos), np.float64(actual_pos))),
        specificity=float(_safe_ratio(np.float64(true_neg), np.float64(actual_neg))),
        n=int(matrix.sum()),
    )


def mean_signed_difference(
    reference: Sequence[float] | FloatArray, predicted: Sequence[float] | FloatArray
) -> float:
    """Mean of predicted − reference over items both scored (NaN = missing); > 0 is lenient."""
    ref = np.asarray(reference, dtype=np.float64)
    pred = np.asarray(predicted, dtype=np.float64)
    if ref.shape != pred.shape:
        raise ValueError("reference and predicted must have the same length")
    both = ~np.isnan(ref) & ~np.isnan(pred)
    return float(np.mean(pred[both] - ref[both])) if both.any() else float("nan")
