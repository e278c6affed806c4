"""Human vs judge agreement for the calibration audit, with item-bootstrap intervals.

Each comparison puts the human label (rows) against one rater (columns): every judge, the
judge ensemble, and a second human on double-rated items. Figures, all from the comparison's
q × q table over the items both rated (q = the full, ordered label list):

- percent agreement (exact), Cohen's kappa (unweighted for ``scale="nominal"``, linearly
  weighted over label ranks for ``"ordinal"``, quadratically for ``"interval"``, as
  scikit-learn with ``labels=``), Gwet's AC1 of the two raters, PABAK = (q·p_o − 1)/(q − 1);
- for two labels, Byrt et al. (1993) prevalence index (a − d)/n and bias index (b − c)/n,
  the table oriented with the positive class (or the first label) first and the human as
  the first rater, so bias > 0 means the human gives the positive label more than the judge;
- with a ``positive`` class ("refused", "unsafe"): the confusion matrix (counts of audited
  items), sensitivity and specificity of the judge for that class;
- for numeric labels, the mean signed difference judge − human (> 0: lenient judge).

Ensemble: for ``"nominal"`` the majority label of the judges who rated the item; a tie goes
to ``tie_label`` when given (e.g. "unsafe", the cautious side), else the ensemble has no
label for the item (it leaves that comparison; ties are counted). For ordinal/interval
scores the ensemble score is the mean of the judges' scores: the mean itself enters the mean
signed difference, the nearest label (ties to the lower one) enters the table figures.

Intervals: 2,000 (default) bootstrap replicates that resample items, within ``strata`` when
given (for a fine audit design pass :func:`sampling.bootstrap_strata`, which collapses
strata too small to resample); 95 % percentile intervals over the replicates where a figure
is defined (NaN when fewer than half are). With ``item_weights`` the population-level
figures (``overall``) and their replicates are weighted; breakdowns by group are unweighted
within the group and use the same resamples. Every replicate is a vector of item counts, and
every figure a function of weighted sums of per-item statistics, so one sparse-dense product
yields all replicates.

``too_small``: a figure rests on fewer than ``MIN_ITEMS`` items, or (binary labels or a
positive class) the human's minority class has fewer than ``MIN_MINORITY`` compared items;
sensitivity and specificity use their own n (human positives, human negatives).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import sparse

from core.stats.agreement import disagreement_weights
from core.stats.bootstrap import (
    COHEN_WEIGHTING,
    index_counts,
    resample_indices,
    within_range,
)
from core.stats.ratings import FloatArray, IntArray, category_values, is_numeric

Scale = Literal["nominal", "ordinal", "interval"]
MIN_ITEMS = 30
MIN_MINORITY = 5
ENSEMBLE = "ensemble"
HUMAN_HUMAN = "human-human"


@dataclass(frozen=True)
class Figure:
    """A value with its 95 % item-bootstrap interval, the n it rests on and a warning flag."""

    value: float
    ci_low: float
    ci_high: float
    n: int
    too_small: bool


@dataclass(frozen=True)
class Comparison:
    """Every figure of human (rows) vs one rater (columns); None where not applicable."""

    rater: str
    labels: tuple[str, ...]
    n: int
    confusion: FloatArray  # unweighted counts of audited items, rows human
    percent_agreement: Figure
    cohen_kappa: Figure
    gwet_ac1: Figure
    pabak: Figure
    prevalence_index: Figure | None
    bias_index: Figure | None
    sensitivity: Figure | None
    specificity: Figure | None
    mean_signed_difference: Figure | None


@dataclass(frozen=True)
class HumanJudgeReport:
    """Overall (population-weighted) comparisons, breakdowns and the human–human ceiling."""

    labels: tuple[str, ...]
    scale: Scale
    positive: str | None
    overall: dict[str, Comparison]  # judge name or "ensemble" → comparison
    human_human: Comparison | None
    breakdowns: dict[str, dict[str, dict[str, Comparison]]]  # attribute → group → rater
    same_family: dict[str, dict[bool, Comparison]]  # judge → same family? → comparison
    ensemble_ties: int
    n_replicates: int
    seed: int
    notes: list[str] = field(default_factory=list)


# --- Encoding ----------------------------------------------------------------------------


def _codes(values: Sequence[str | None], index: Mapping[str, int], name: str) -> IntArray:
    out = np.full(len(values), -1, dtype=np.int64)
    for i, label in enumerate(values):
        if label is None or label == "":
            continue
        if label not in index:
            raise ValueError(f"{name}: label {label!r} is not in labels")
        out[i] = index[label]
    return out


def _scores(codes: IntArray, values: FloatArray | None) -> FloatArray:
    if values is None:
        return np.full(codes.shape, np.nan)
    return np.where(codes >= 0, values[np.maximum(codes, 0)], np.nan)


def majority_vote(judge_codes: IntArray, q: int, tie_code: int = -1) -> tuple[IntArray, int]:
    """Majority label per item (items × judges codes, −1 missing) and the number of ties."""
    n_items = judge_codes.shape[0]
    counts = np.zeros((n_items, q))
    rows, cols = np.nonzero(judge_codes >= 0)
    np.add.at(counts, (rows, judge_codes[rows, cols]), 1.0)
    top = counts.max(axis=1) if q else np.zeros(n_items)
    tied = (counts == top[:, None]).sum(axis=1) > 1
    tied &= top > 0
    winner = np.where(top > 0, counts.argmax(axis=1), -1)
    return np.where(tied, tie_code, winner).astype(np.int64), int(tied.sum())


def nearest_code(scores: FloatArray, values: FloatArray) -> IntArray:
    """Index of the nearest scale value (ties to the lower one); −1 where the score is NaN."""
    distance = np.round(np.abs(np.nan_to_num(scores)[:, None] - values[None, :]), 9)
    return np.where(np.isnan(scores), -1, distance.argmin(axis=1)).astype(np.int64)


# --- Sufficient statistics and figures ----------------------------------------------------


@dataclass(frozen=True)
class _Pair:
    name: str
    reference: IntArray
    predicted: IntArray
    difference: FloatArray  # predicted − reference score, NaN where undefined


@dataclass(frozen=True)
class _Block:
    """A set of comparisons split by a grouping of the items (group −1: left out)."""

    attribute: str
    groups: tuple[Hashable, ...]
    group_of_item: IntArray
    pairs: tuple[int, ...]
    weighted: bool


def _block_matrix(
    block: _Block, pairs: Sequence[_Pair], q: int, weights: FloatArray
) -> sparse.csr_matrix:
    """Items × (groups · pairs · (q² + 1)) matrix: the item's table cell and score difference.

    The difference is defined exactly where both raters rated the item (labels numeric),
    so the table total doubles as the denominator of the mean signed difference.
    """
    width = q * q + 1
    n_items = weights.shape[0]
    rows, cols, data = [], [], []
    for slot, p in enumerate(block.pairs):
        pair = pairs[p]
        group = block.group_of_item
        base = (group * len(block.pairs) + slot) * width
        cell = (pair.reference >= 0) & (pair.predicted >= 0) & (group >= 0)
        index = np.flatnonzero(cell)
        rows.append(index)
        cols.append(base[index] + pair.reference[index] * q + pair.predicted[index])
        data.append(weights[index])
        scored = index[~np.isnan(pair.difference[index])]
        rows.append(scored)
        cols.append(base[scored] + q * q)
        data.append(weights[scored] * pair.difference[scored])
    shape = (n_items, len(block.groups) * len(block.pairs) * width)
    return sparse.csr_matrix(
        (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=shape
    )


def _ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=np.abs(denominator) > 1e-12)
    return out


def figures_from_sums(
    sums: FloatArray, q: int, scale: Scale, positive: int | None
) -> dict[str, FloatArray]:
    """Every figure from summed statistics of shape (..., q² + 1), vectorised.

    Cohen's kappa is agreement.cohen_kappa_from_table's formula, with the chance term as
    rows · D · cols / n (matrix products instead of a (..., q, q) expected table).
    """
    flat = sums[..., : q * q]
    table = flat.reshape(*sums.shape[:-1], q, q)
    n = flat.sum(axis=-1)
    rows, cols = table.sum(axis=-1), table.sum(axis=-2)
    observed = _ratio(flat[..., :: q + 1].sum(axis=-1), n)
    share = _ratio(rows + cols, 2.0 * n[..., None])
    chance = (share * (1.0 - share)).sum(axis=-1) / max(q - 1, 1)
    disagreement = disagreement_weights(q, COHEN_WEIGHTING[scale])
    observed_disagreement = flat @ disagreement.ravel()
    chance_disagreement = _ratio(((rows @ disagreement) * cols).sum(axis=-1), n)
    out = {
        "percent_agreement": observed,
        "cohen_kappa": within_range(1.0 - _ratio(observed_disagreement, chance_disagreement)),
        "gwet_ac1": within_range(_ratio(observed - chance, 1.0 - chance)),
        "pabak": (q * observed - 1.0) / (q - 1) if q > 1 else np.full(n.shape, np.nan),
        "mean_signed_difference": _ratio(sums[..., q * q], n),
    }
    if q == 2:
        p = positive if positive is not None else 0
        o = 1 - p
        out["prevalence_index"] = _ratio(table[..., p, p] - table[..., o, o], n)
        out["bias_index"] = _ratio(table[..., p, o] - table[..., o, p], n)
    if positive is not None:
        k = positive
        out["sensitivity"] = _ratio(table[..., k, k], rows[..., k])
        negatives = n - rows[..., k]
        out["specificity"] = _ratio(negatives - cols[..., k] + table[..., k, k], negatives)
    return out


def percentile_bounds(
    replicates: FloatArray, level: float = 0.95, min_defined: float = 0.5
) -> tuple[FloatArray, FloatArray]:
    """Column-wise :func:`bootstrap.percentile_interval` of a replicates × figures array."""
    ordered = np.sort(replicates, axis=0)  # NaN sorts last
    defined = np.isfinite(replicates).sum(axis=0)
    tail = (1.0 - level) / 2.0
    bounds = []
    for quantile in (tail, 1.0 - tail):
        position = quantile * np.maximum(defined - 1, 0)
        below = np.floor(position).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(defined - 1, 0))
        columns = np.arange(replicates.shape[1])
        low_value, high_value = ordered[below, columns], ordered[above, columns]
        bounds.append(low_value + (high_value - low_value) * (position - below))
    usable = (defined > 0) & (defined >= min_defined * replicates.shape[0])
    return np.where(usable, bounds[0], np.nan), np.where(usable, bounds[1], np.nan)


# --- The report ----------------------------------------------------------------------------


def _group_index(values: Sequence[Hashable | None]) -> tuple[tuple[Hashable, ...], IntArray]:
    present = sorted({v for v in values if v is not None}, key=str)
    position = {value: i for i, value in enumerate(present)}
    index = np.array([-1 if v is None else position[v] for v in values], dtype=np.int64)
    return tuple(present), index


def _build_pairs(
    human: Sequence[str | None],
    judges: Mapping[str, Sequence[str | None]],
    labels: Sequence[str],
    scale: Scale,
    tie_label: str | None,
    second_human: Sequence[str | None] | None,
) -> tuple[list[_Pair], int]:
    index = {label: i for i, label in enumerate(labels)}
    values = category_values(labels) if is_numeric(labels) else None
    if scale != "nominal" and values is None:
        raise ValueError("ordinal and interval scales need numeric labels")
    reference = _codes(human, index, "human")
    human_scores = _scores(reference, values)
    n_items = reference.size
    pairs = []
    judge_codes = np.empty((n_items, len(judges)), dtype=np.int64)
    for column, (name, labelled) in enumerate(judges.items()):
        if len(labelled) != n_items:
            raise ValueError(f"judge {name!r} must label every item (None when missing)")
        codes = _codes(labelled, index, name)
        judge_codes[:, column] = codes
        pairs.append(_Pair(name, reference, codes, _scores(codes, values) - human_scores))
    ties = 0
    if scale == "nominal":
        tie_code = -1 if tie_label is None else index[tie_label]
        ensemble, ties = majority_vote(judge_codes, len(labels), tie_code)
        ensemble_scores = _scores(ensemble, values)
    else:
        assert values is not None
        scores = _scores(judge_codes, values)
        rated = (~np.isnan(scores)).sum(axis=1)
        total = np.nansum(scores, axis=1)
        ensemble_scores = np.where(rated > 0, total / np.maximum(rated, 1), np.nan)
        ensemble = nearest_code(ensemble_scores, values)
    pairs.append(_Pair(ENSEMBLE, reference, ensemble, ensemble_scores - human_scores))
    if second_human is not None:
        if len(second_human) != n_items:
            raise ValueError("second_human must give one label per item (None when missing)")
        codes = _codes(second_human, index, "second_human")
        pairs.append(_Pair(HUMAN_HUMAN, reference, codes, _scores(codes, values) - human_scores))
    return pairs, ties


def _figure(value: float, low: float, high: float, n: int, minority: int | None) -> Figure:
    small = n < MIN_ITEMS or (minority is not None and minority < MIN_MINORITY)
    if not np.isfinite(value):
        low = high = float("nan")
    return Figure(float(value), float(low), float(high), n, bool(small))


def _comparison(
    name: str,
    labels: tuple[str, ...],
    raw: FloatArray,
    point: dict[str, FloatArray],
    low: dict[str, FloatArray],
    high: dict[str, FloatArray],
    column: int,
    positive: int | None,
    numeric: bool,
) -> Comparison:
    q = len(labels)
    table = raw[: q * q].reshape(q, q)
    n = round(float(table.sum()))
    minority: int | None = None
    if positive is not None or q == 2:
        k = positive if positive is not None else 0
        yes = round(float(table[k].sum()))
        minority = min(yes, n - yes)

    def figure(key: str, count: int, rule: int | None = minority) -> Figure | None:
        if key not in point:
            return None
        return _figure(point[key][column], low[key][column], high[key][column], count, rule)

    def required(key: str) -> Figure:
        result = figure(key, n)
        assert result is not None
        return result

    sensitivity = specificity = None
    if positive is not None:
        positives = round(float(table[positive].sum()))
        sensitivity = figure("sensitivity", positives, None)
        specificity = figure("specificity", n - positives, None)
    return Comparison(
        rater=name,
        labels=labels,
        n=n,
        confusion=table.copy(),
        percent_agreement=required("percent_agreement"),
        cohen_kappa=required("cohen_kappa"),
        gwet_ac1=required("gwet_ac1"),
        pabak=required("pabak"),
        prevalence_index=figure("prevalence_index", n),
        bias_index=figure("bias_index", n),
        sensitivity=sensitivity,
        specificity=specificity,
        mean_signed_difference=figure("mean_signed_difference", n) if numeric else None,
    )


def human_judge_report(
    human: Sequence[str | None],
    judges: Mapping[str, Sequence[str | None]],
    labels: Sequence[str],
    *,
    scale: Scale = "nominal",
    positive: str | None = None,
    second_human: Sequence[str | None] | None = None,
    strata: Sequence[Hashable] | None = None,
    item_weights: npt.ArrayLike | None = None,
    groups: Mapping[str, Sequence[Hashable | None]] | None = None,
    same_family: Mapping[str, Sequence[bool | None]] | None = None,
    tie_label: str | None = None,
    n_replicates: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> HumanJudgeReport:
    """Every human-vs-judge figure, per judge, for the ensemble and human–human.

    ``labels`` is the full ordered label list (scores as strings, e.g. "0", "0.25", …).
    ``groups`` maps an attribute (category, format, scenario, evaluated model) to one value
    per item (None leaves the item out of that breakdown); ``same_family`` maps a judge to
    whether it belongs to the evaluated model's family, per item (self-preference).
    """
    labels_t = tuple(labels)
    if len(set(labels_t)) != len(labels_t) or len(labels_t) < 2:
        raise ValueError("labels must list at least two distinct labels")
    if positive is not None and positive not in labels_t:
        raise ValueError(f"positive class {positive!r} is not in labels")
    if tie_label is not None and tie_label not in labels_t:
        raise ValueError(f"tie_label {tie_label!r} is not in labels")
    pairs, ties = _build_pairs(human, judges, labels_t, scale, tie_label, second_human)
    n_items = len(human)
    base = np.ones(n_items) if item_weights is None else np.asarray(item_weights, dtype=float)
    if base.shape != (n_items,):
        raise ValueError("item_weights must give one weight per item")
    judge_slots = tuple(range(len(judges) + 1))  # the judges and the ensemble
    everything = np.zeros(n_items, dtype=np.int64)
    blocks = [_Block("overall", ("all",), everything, tuple(range(len(pairs))), True)]
    for attribute, values in (groups or {}).items():
        if len(values) != n_items:
            raise ValueError(f"group {attribute!r} must give one value per item")
        names, index = _group_index(values)
        blocks.append(_Block(attribute, names, index, judge_slots, False))
    judge_names = list(judges)
    for judge, flags in (same_family or {}).items():
        if judge not in judges or len(flags) != n_items:
            raise ValueError(f"same_family[{judge!r}] must be a known judge with one flag per item")
        index = np.array([-1 if f is None else int(bool(f)) for f in flags], dtype=np.int64)
        blocks.append(
            _Block(f"same_family:{judge}", (False, True), index, (judge_names.index(judge),), False)
        )

    q = len(labels_t)
    numeric = is_numeric(labels_t)
    ones = np.ones(n_items)
    weighted = sparse.hstack(
        [_block_matrix(b, pairs, q, base if b.weighted else ones) for b in blocks], format="csr"
    )
    raw = (
        sparse.hstack([_block_matrix(b, pairs, q, ones) for b in blocks], format="csr").T @ ones
        if item_weights is not None
        else weighted.T @ ones
    )
    point_sums = weighted.T @ ones
    indices = resample_indices(n_items, n_replicates, seed, strata)
    counts = index_counts(indices, n_items)
    replicate_sums = np.asarray(weighted.T @ counts.T).T  # replicates × columns

    width = q * q + 1
    k = labels_t.index(positive) if positive is not None else None
    point = figures_from_sums(point_sums.reshape(-1, width), q, scale, k)
    reps = figures_from_sums(replicate_sums.reshape(n_replicates, -1, width), q, scale, k)
    low, high = {}, {}
    for key, replicates in reps.items():
        low[key], high[key] = percentile_bounds(replicates, level)
    raw_rows = raw.reshape(-1, width)

    overall: dict[str, Comparison] = {}
    human_human = None
    breakdowns: dict[str, dict[str, dict[str, Comparison]]] = {}
    family: dict[str, dict[bool, Comparison]] = {}
    column = 0
    for block in blocks:
        for group in block.groups:
            for p in block.pairs:
                name = pairs[p].name
                comparison = _comparison(
                    name, labels_t, raw_rows[column], point, low, high, column, k, numeric
                )
                column += 1
                if block.attribute == "overall":
                    if name == HUMAN_HUMAN:
                        human_human = comparison
                    else:
                        overall[name] = comparison
                elif block.attribute.startswith("same_family:"):
                    family.setdefault(name, {})[bool(group)] = comparison
                else:
                    breakdowns.setdefault(block.attribute, {}).setdefault(str(group), {})[name] = (
                        comparison
                    )
    notes = []
    if ties:
        notes.append(
            f"{ties} items with tied judge votes: "
            + (f"counted as {tie_label!r}" if tie_label else "left out of the ensemble")
        )
    return HumanJudgeReport(
        labels=labels_t,
        scale=scale,
        positive=positive,
        overall=overall,
        human_human=human_human,
        breakdowns=breakdowns,
        same_family=family,
        ensemble_ties=ties,
        n_replicates=n_replicates,
        seed=seed,
        notes=notes,
    )
