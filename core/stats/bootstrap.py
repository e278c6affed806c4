"""Item bootstrap of every agreement figure from per-item sufficient statistics.

Items (never single ratings) are resampled, within strata when given. A replicate is a
vector of item weights (how often each item was drawn, times an optional population weight),
and every figure is a function of weighted sums of per-item statistics: coincidence
matrices (alpha), category shares and pair agreement (Fleiss, Gwet, percent agreement) and
one-hot rater-pair cells (Cohen). One matrix product per statistic then yields all
replicates at once, instead of recomputing each coefficient from raw ratings per replicate.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from core.stats.agreement import (
    CohenWeighting,
    alpha_from_coincidences,
    chance_corrected_from_sums,
    cohen_kappa_from_table,
    gwet_item_stats,
    item_coincidences,
)
from core.stats.ratings import FloatArray, IntArray, Level, Ratings

COHEN_WEIGHTING: dict[Level, CohenWeighting] = {
    "nominal": "none",
    "ordinal": "linear",
    "interval": "quadratic",
}


def resample_indices(
    n_items: int,
    n_replicates: int,
    seed: int,
    strata: Sequence[Hashable] | None = None,
) -> IntArray:
    """Replicates × items array of item indices drawn with replacement (within strata).

    With strata, each replicate draws exactly as many items from each stratum as the sample
    holds, so stratum sizes are preserved.
    """
    rng = np.random.default_rng(seed)
    if strata is None:
        return rng.integers(0, n_items, size=(n_replicates, n_items), dtype=np.int64)
    if len(strata) != n_items:
        raise ValueError("strata must give one stratum per item")
    labels = np.asarray([str(s) for s in strata])
    out = np.empty((n_replicates, n_items), dtype=np.int64)
    # Sorted stratum order keeps the draw reproducible whatever the item order of strata.
    for stratum in sorted(set(labels.tolist())):
        members = np.flatnonzero(labels == stratum)
        draws = rng.integers(0, members.size, size=(n_replicates, members.size))
        out[:, members] = members[draws]
    return out


def index_counts(indices: IntArray, n_items: int) -> FloatArray:
    """Replicates × items matrix: how many times each item was drawn in each replicate."""
    n_replicates = indices.shape[0]
    offsets = (np.arange(n_replicates, dtype=np.int64) * n_items)[:, None]
    flat = np.bincount((indices + offsets).ravel(), minlength=n_replicates * n_items)
    return flat.reshape(n_replicates, n_items).astype(np.float64)


def stratum_weights(
    strata: Sequence[Hashable], population_share: Mapping[Hashable, float]
) -> FloatArray:
    """Per-item weights population share / sample share, for population-level figures."""
    labels = list(strata)
    n = len(labels)
    if n == 0:
        return np.zeros(0)
    counts: dict[Hashable, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    missing = [label for label in counts if label not in population_share]
    if missing:
        raise ValueError(f"no population share for strata {missing}")
    total = float(sum(population_share[label] for label in counts))
    return np.array([population_share[s] / total / (counts[s] / n) for s in labels])


def percentile_interval(
    replicates: FloatArray, level: float = 0.95, min_defined: float = 0.5
) -> tuple[float, float]:
    """Percentile interval over the defined (finite) replicates.

    NaN bounds when fewer than ``min_defined`` of the replicates are defined: an interval
    over a small, selected subset of resamples would look precise but is not.
    """
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0 or finite.size < min_defined * replicates.size:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class ItemStatistics:
    """Per-item sufficient statistics of every figure in the agreement report."""

    level: Level
    values: FloatArray
    coincidences: FloatArray  # items × q²
    gwet: FloatArray  # items × (3 + q), identity weights
    pair_cells: IntArray  # items × pairs, cell a·q + b of the pair's table, −1 if missing
    pairs: tuple[tuple[int, int], ...]
    cohen_weighting: CohenWeighting

    @property
    def n_categories(self) -> int:
        return int(self.values.shape[0])


def item_statistics(ratings: Ratings, level: Level = "nominal") -> ItemStatistics:
    """Collect per-item statistics; Cohen's weighting follows the level (none/linear/quad)."""
    counts = ratings.category_counts()
    q = ratings.n_categories
    pairs = tuple(combinations(range(ratings.n_raters), 2))
    cells = np.full((ratings.n_items, len(pairs)), -1, dtype=np.int64)
    for column, (a, b) in enumerate(pairs):
        first, second = ratings.codes[:, a], ratings.codes[:, b]
        both = ~np.isnan(first) & ~np.isnan(second)
        cells[both, column] = first[both].astype(np.int64) * q + second[both].astype(np.int64)
    return ItemStatistics(
        level=level,
        values=ratings.values,
        coincidences=item_coincidences(counts).reshape(ratings.n_items, q * q),
        gwet=gwet_item_stats(counts, np.eye(q)),
        pair_cells=cells,
        pairs=pairs,
        cohen_weighting=COHEN_WEIGHTING[level],
    )


def within_range(values: FloatArray, low: float = -1.0, high: float = 1.0) -> FloatArray:
    """A chance-corrected coefficient within its possible range [−1, 1] (NaN stays NaN).

    The population coefficient cannot leave it, but small-sample estimators can (Fleiss'
    kappa with missing ratings, Krippendorff's alpha on a few items: −1.67 on three items all
    disagreeing while single ratings tilt the marginals). Such an estimate reads as the
    bound, and so do its replicates, so that every interval lies within the range.
    """
    return np.clip(values, low, high)


@dataclass(frozen=True)
class Figures:
    """One value per replicate (or a single value) of each figure in the report."""

    percent_agreement: FloatArray
    krippendorff_alpha: FloatArray
    fleiss_kappa: FloatArray
    gwet_ac1: FloatArray
    cohen_kappa: dict[tuple[int, int], FloatArray]


def figures_from_weights(stats: ItemStatistics, weights: FloatArray) -> Figures:
    """Every figure for each row of a replicates × items weight matrix."""
    weights = np.atleast_2d(weights)
    q = stats.n_categories
    identity = np.eye(q)
    coincidences = (weights @ stats.coincidences).reshape(-1, q, q)
    gwet_sums = weights @ stats.gwet
    pa, _, fleiss = chance_corrected_from_sums(gwet_sums, identity, "fleiss")
    _, _, ac1 = chance_corrected_from_sums(gwet_sums, identity, "gwet")
    # All pair tables at once: W · onehot, where onehot marks each item's cell per pair.
    n_items, n_pairs = stats.pair_cells.shape
    onehot = np.zeros((n_items, n_pairs * q * q))
    rows, columns = np.nonzero(stats.pair_cells >= 0)
    onehot[rows, columns * q * q + stats.pair_cells[rows, columns]] = 1.0
    tables = (weights @ onehot).reshape(-1, n_pairs, q, q)
    kappas = within_range(cohen_kappa_from_table(tables, stats.cohen_weighting))
    cohen = {pair: kappas[:, column] for column, pair in enumerate(stats.pairs)}
    return Figures(
        percent_agreement=pa,
        krippendorff_alpha=within_range(
            alpha_from_coincidences(coincidences, stats.values, stats.level)
        ),
        fleiss_kappa=within_range(fleiss),
        gwet_ac1=within_range(ac1),
        cohen_kappa=cohen,
    )


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimates (single values) and replicates of every figure."""

    point: Figures
    replicates: Figures
    indices: IntArray


def bootstrap_figures(
    ratings: Ratings,
    level: Level = "nominal",
    n_replicates: int = 1000,
    seed: int = 0,
    strata: Sequence[Hashable] | None = None,
    item_weights: FloatArray | None = None,
) -> BootstrapResult:
    """Point estimates and item-bootstrap replicates of every figure.

    ``item_weights`` (e.g. from :func:`stratum_weights`) turns the figures into
    population-weighted ones; the resampling itself stays within strata.
    """
    stats = item_statistics(ratings, level)
    base = np.ones(ratings.n_items) if item_weights is None else np.asarray(item_weights)
    if base.shape != (ratings.n_items,):
        raise ValueError("item_weights must give one weight per item")
    indices = resample_indices(ratings.n_items, n_replicates, seed, strata)
    weights = index_counts(indices, ratings.n_items) * base[None, :]
    return BootstrapResult(
        point=figures_from_weights(stats, base[None, :]),
        replicates=figures_from_weights(stats, weights),
        indices=indices,
    )
