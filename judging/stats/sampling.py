"""Drawing the calibration-audit sample: stratum allocation, oversampling and margins of error.

The frame is a list of :class:`FrameItem` (item id, stratum key, rare-class and
judges-disagree flags). :func:`allocate` splits the audit size over strata;
:func:`draw_audit_sample` draws the items reproducibly from a seed and returns the inclusion
weights that weight the audit back to the population; :func:`expected_margin_of_error` and
:func:`compare_allocations` show what each allocation choice does to the precision of a
stratified proportion.

Oversampling is done by sub-stratification, so inclusion probabilities stay exact: inside
each stratum the items fall into *cells* (ordinary, rare, disagree, rare+disagree); the
stratum's share of the audit is split over its cells in proportion to cell size × factor
(factor = ``oversample_rare`` for rare items, ``oversample_disagree`` for disagreement
items, their product for items that are both), with at least one item per non-empty cell
when the stratum's share allows it; each cell is then a simple random sample without
replacement. So a rare item is about ``oversample_rare`` times as likely to be audited as an
ordinary item of the same stratum (up to rounding and the cap at the cell's size), and its
weight is cell size / cell sample size. The cells are the design strata: bootstrap within
them (``AuditSample.design_strata``, with small ones collapsed by :func:`bootstrap_strata`)
and weight back with ``AuditSample.weights``.

numpy is imported by the two functions that compute with it: the frame's types and the
margins are also used by pages that never draw.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

Method = Literal["proportional", "sqrt", "equal"]
METHODS: tuple[Method, ...] = ("proportional", "sqrt", "equal")


@dataclass(frozen=True)
class FrameItem:
    """One judged response in the sampling frame."""

    item_id: str
    stratum: str
    rare: bool = False
    disagree: bool = False


def stratum_key(*parts: object) -> str:
    """A stratum key from its attributes, e.g. ``stratum_key(category, fmt, model)``."""
    return "|".join(str(part) for part in parts)


def strata_sizes(items: Sequence[FrameItem]) -> dict[str, int]:
    """Number of frame items per stratum."""
    sizes: dict[str, int] = {}
    for item in items:
        sizes[item.stratum] = sizes.get(item.stratum, 0) + 1
    return sizes


def _method_weight(size: int, method: Method) -> float:
    if method == "proportional":
        return float(size)
    if method == "sqrt":
        return math.sqrt(size)
    if method == "equal":
        return 1.0
    raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")


def _lowered_floor(sizes: Sequence[int], floor: int, n: int) -> int:
    """The largest common floor f ≤ floor with Σ min(f, size) ≤ n."""
    low, high = 0, floor
    while low < high:
        middle = (low + high + 1) // 2
        if sum(min(middle, size) for size in sizes) <= n:
            low = middle
        else:
            high = middle - 1
    return low


def _water_fill(weights: list[float], lower: list[int], upper: list[int], n: int) -> list[float]:
    """x_h = clip(λ·w_h, lower_h, upper_h) with Σ x_h = n (Σ lower ≤ n ≤ Σ upper).

    The total is piecewise linear in λ with breaks at lower_h/w_h and upper_h/w_h: a binary
    search over the sorted breaks finds the segment, and λ is interpolated exactly in it.
    """
    import numpy as np

    w = np.asarray(weights, dtype=np.float64)
    lo = np.asarray(lower, dtype=np.float64)
    up = np.asarray(upper, dtype=np.float64)

    def total(scale: float) -> float:
        return float(np.clip(scale * w, lo, up).sum())

    positive = w > 0
    breaks = np.unique(
        np.concatenate([[0.0], lo[positive] / w[positive], up[positive] / w[positive]])
    )
    first, last = 0, breaks.size - 1
    while first < last:
        middle = (first + last) // 2
        if total(float(breaks[middle])) >= n:
            last = middle
        else:
            first = middle + 1
    scale = float(breaks[first])
    if first > 0:
        left = float(breaks[first - 1])
        below, above = total(left), total(scale)
        if above > below:
            scale = left + (n - below) * (scale - left) / (above - below)
    return [float(x) for x in np.clip(scale * w, lo, up)]


def _allocate_weighted(
    keys: Sequence[str], sizes: Sequence[int], weights: Sequence[float], n: int, floor: int
) -> dict[str, int]:
    if n < 0 or floor < 0:
        raise ValueError("n and floor must not be negative")
    if any(size < 0 for size in sizes):
        raise ValueError("stratum sizes must not be negative")
    if n >= sum(sizes):
        return dict(zip(keys, sizes, strict=True))
    floors = [min(floor, size) for size in sizes]
    if sum(floors) > n:
        common = _lowered_floor(sizes, floor, n)
        floors = [min(common, size) for size in sizes]
    ideal = _water_fill(list(weights), floors, list(sizes), n)
    counts = [
        max(lo, min(up, math.floor(x))) for x, lo, up in zip(ideal, floors, sizes, strict=True)
    ]
    # Largest remainder; ties go to the stratum whose key sorts first, so the result never
    # depends on the order of the input.
    order = sorted(range(len(keys)), key=lambda h: (-(ideal[h] - counts[h]), keys[h]))
    short = n - sum(counts)
    while short > 0:
        progressed = False
        for h in order:
            if short == 0:
                break
            if counts[h] < sizes[h]:
                counts[h] += 1
                short -= 1
                progressed = True
        if not progressed:
            break
    return dict(zip(keys, counts, strict=True))


def allocate(
    strata_sizes: Mapping[str, int],
    n: int,
    method: Method = "proportional",
    floor: int = 0,
) -> dict[str, int]:
    """Split an audit of n items over strata.

    Target shares: proportional to stratum size, to its square root, or equal. The
    allocation is n_h = clip(λ·share_h, floor_h, size_h) with λ set so that Σ n_h = n,
    rounded by largest remainder (ties to the key that sorts first), where
    floor_h = min(floor, size_h). Invariants: Σ n_h = min(n, Σ size_h); n_h ≤ size_h;
    n_h ≥ floor_h. If n ≥ Σ size_h every item is taken (a census). If n is smaller than
    Σ floor_h the floors cannot all be met: the common floor is lowered to the largest value
    f with Σ min(f, size_h) ≤ n and the rest is shared by the method, so every stratum still
    gets as close to the requested floor as the total allows.
    """
    keys = sorted(strata_sizes)
    sizes = [int(strata_sizes[key]) for key in keys]
    weights = [_method_weight(size, method) if size else 0.0 for size in sizes]
    return _allocate_weighted(keys, sizes, weights, n, floor)


def _cell(item: FrameItem) -> str:
    return ("rare" if item.rare else "ordinary") + ("+disagree" if item.disagree else "")


@dataclass(frozen=True)
class AuditSample:
    """A drawn audit sample and everything needed to reproduce it and weight it back."""

    item_ids: tuple[str, ...]
    allocation: dict[str, int]  # stratum → number of items drawn
    cells: dict[str, tuple[int, int]]  # design stratum "stratum#cell" → (size, drawn)
    weights: dict[str, float]  # item id → inverse inclusion probability (cell size / drawn)
    design_strata: dict[str, str]  # item id → design stratum, for the stratified bootstrap
    seed: int
    method: Method
    floor: int
    oversample_rare: float
    oversample_disagree: float

    def population_shares(self) -> dict[Hashable, float]:
        """Design stratum → share of the frame, as :func:`bootstrap.stratum_weights` takes."""
        total = sum(size for size, _ in self.cells.values())
        return {key: size / total for key, (size, drawn) in self.cells.items() if drawn}


def draw_audit_sample(
    items: Sequence[FrameItem],
    n: int = 2000,
    method: Method = "proportional",
    floor: int = 0,
    oversample_rare: float = 1.0,
    oversample_disagree: float = 1.0,
    seed: int = 0,
) -> AuditSample:
    """Draw a stratified audit sample, reproducibly from ``seed``.

    The result depends only on the set of frame items (not their order), the parameters and
    the seed: strata, cells and items are visited in sorted order and drawn with
    ``numpy.random.default_rng(seed)``. Oversampling factors must be ≥ 1 (see the module
    docstring for what they do).
    """
    import numpy as np

    if oversample_rare < 1.0 or oversample_disagree < 1.0:
        raise ValueError("oversampling factors must be at least 1")
    ids = [item.item_id for item in items]
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be unique")
    allocation = allocate(strata_sizes(items), n, method, floor)
    members: dict[str, dict[str, list[str]]] = {}
    for item in items:
        members.setdefault(item.stratum, {}).setdefault(_cell(item), []).append(item.item_id)
    rng = np.random.default_rng(seed)
    chosen: list[str] = []
    cells: dict[str, tuple[int, int]] = {}
    weights: dict[str, float] = {}
    design: dict[str, str] = {}
    for stratum in sorted(members):
        by_cell = members[stratum]
        names = sorted(by_cell)
        sizes = [len(by_cell[name]) for name in names]
        factors = [
            (oversample_rare if name.startswith("rare") else 1.0)
            * (oversample_disagree if name.endswith("+disagree") else 1.0)
            for name in names
        ]
        split = _allocate_weighted(
            names,
            sizes,
            [s * f for s, f in zip(sizes, factors, strict=True)],
            allocation[stratum],
            floor=1,
        )
        for name in names:
            pool = sorted(by_cell[name])
            drawn = split[name]
            key = f"{stratum}#{name}"
            cells[key] = (len(pool), drawn)
            picks = rng.choice(len(pool), size=drawn, replace=False).tolist()
            for index in sorted(picks):
                chosen.append(pool[index])
                weights[pool[index]] = len(pool) / drawn
                design[pool[index]] = key
    return AuditSample(
        item_ids=tuple(chosen),
        allocation=allocation,
        cells=cells,
        weights=weights,
        design_strata=design,
        seed=seed,
        method=method,
        floor=floor,
        oversample_rare=oversample_rare,
        oversample_disagree=oversample_disagree,
    )


def _coarser(key: str) -> str | None:
    """The key one level up: "c|f|m#cell" → "c|f|m" → "c|f" → "c"; None above the top."""
    for separator in ("#", "|"):
        if separator in key:
            return key.rsplit(separator, 1)[0]
    return None


def bootstrap_strata(design_strata: Sequence[str], min_size: int = 10) -> list[str]:
    """Resampling strata for the item bootstrap, with small design strata collapsed.

    A within-stratum bootstrap gives a stratum of one item no variance at all, and one of
    n_h items only (n_h − 1)/n_h of it, so an audit spread over hundreds of small strata
    would get intervals that are far too narrow. Groups with fewer than ``min_size`` items
    are therefore merged one level up, repeatedly: cells into their stratum, then the
    stratum key loses its last ``|`` component (so build keys coarsest first, e.g.
    ``stratum_key(category, format, model)``); whatever is still small at the top goes into
    one pooled group. This is the usual collapsed-strata remedy, slightly conservative.
    Merged groups are named "<prefix>*" so they never coincide with a design stratum.
    Weights are per item and are not affected.
    """
    current = list(design_strata)
    while True:
        counts: dict[str, int] = {}
        for key in current:
            counts[key] = counts.get(key, 0) + 1
        moves = {}
        for key, count in counts.items():
            if count < min_size:
                parent = _coarser(key.rstrip("*"))
                moves[key] = "(pooled small strata)" if parent is None else parent + "*"
        moves = {key: target for key, target in moves.items() if target != key}
        if not moves:
            return current
        current = [moves.get(key, key) for key in current]


# --- Expected precision -----------------------------------------------------------------


def _z(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def _proportion(p: float | Mapping[str, float], key: str) -> float:
    value = p[key] if isinstance(p, Mapping) else p
    if not 0.0 <= value <= 1.0:
        raise ValueError("expected proportions must lie in [0, 1]")
    return float(value)


def _stratum_variance(size: int, drawn: int, p: float) -> float:
    """V(p_h) = (N_h − n_h)/(N_h − 1) · P_h Q_h / n_h; 0 for a census, inf if none drawn."""
    if drawn >= size:
        return 0.0
    if drawn <= 0:
        return math.inf
    return (size - drawn) / (size - 1) * p * (1.0 - p) / drawn


def expected_margin_of_error(
    allocation: Mapping[str, int],
    strata_sizes: Mapping[str, int],
    p: float | Mapping[str, float] = 0.5,
    level: float = 0.95,
) -> float:
    """Expected half-width z·√V of a stratified proportion's interval.

    V(p_st) = Σ_h W_h² · (N_h − n_h)/(N_h − 1) · P_h Q_h / n_h with W_h = N_h / N: the exact
    variance of the stratified estimate of a proportion under simple random sampling
    without replacement in each stratum (Cochran, *Sampling Techniques*, 3rd ed., 1977,
    ch. 5, "Stratified sampling for proportions"). ``p`` is the expected proportion, one
    value for all strata (0.5 is the worst case) or one per stratum. A stratum with items
    but none drawn makes the margin infinite (its share cannot be estimated).
    """
    total = sum(strata_sizes.values())
    if total <= 0:
        raise ValueError("the population is empty")
    variance = 0.0
    for key, size in strata_sizes.items():
        if size == 0:
            continue
        share = size / total
        variance += share**2 * _stratum_variance(
            size, int(allocation.get(key, 0)), _proportion(p, key)
        )
    return _z(level) * math.sqrt(variance)


def stratum_margins(
    allocation: Mapping[str, int],
    strata_sizes: Mapping[str, int],
    p: float | Mapping[str, float] = 0.5,
    level: float = 0.95,
) -> dict[str, float]:
    """Per-stratum expected half-width (unweighted, as per-stratum figures are)."""
    z = _z(level)
    return {
        key: z
        * math.sqrt(_stratum_variance(size, int(allocation.get(key, 0)), _proportion(p, key)))
        for key, size in strata_sizes.items()
        if size > 0
    }


@dataclass(frozen=True)
class AllocationChoice:
    """What one allocation method does to precision: overall and worst-stratum margins."""

    method: Method
    allocation: dict[str, int]
    overall_margin: float
    worst_stratum: str
    worst_stratum_margin: float
    smallest_stratum_n: int


def compare_allocations(
    strata_sizes: Mapping[str, int],
    n: int,
    floor: int = 0,
    p: float | Mapping[str, float] = 0.5,
    methods: Sequence[Method] = METHODS,
    level: float = 0.95,
) -> list[AllocationChoice]:
    """One :class:`AllocationChoice` per method, for a page that shows the trade-off."""
    choices = []
    for method in methods:
        allocation = allocate(strata_sizes, n, method, floor)
        margins = stratum_margins(allocation, strata_sizes, p, level)
        worst = max(sorted(margins), key=lambda key: margins[key])
        choices.append(
            AllocationChoice(
                method=method,
                allocation=allocation,
                overall_margin=expected_margin_of_error(allocation, strata_sizes, p, level),
                worst_stratum=str(worst),
                worst_stratum_margin=margins[worst],
                smallest_stratum_n=min(
                    (allocation[k] for k, s in strata_sizes.items() if s > 0), default=0
                ),
            )
        )
    return choices
