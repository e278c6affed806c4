"""Each reviewer's quality figures, per field, with item-bootstrap intervals (no Django).

The figures (every one with its n and a 95 % percentile interval over ``n_replicates``
bootstrap replicates that resample the figure's items, seeded, as the audit's statistics do):

- **gold accuracy**: the share of the reviewer's gold answers that matched the expected value
  (per field: that field's match; overall: every field of the item matched). Items: answers.
- **agreement with the settled outcome, their own vote excluded**: on samples whose review
  settled (verified or rejected), the reviewer's label against the settled one, counted only
  where the settlement does not rest on their vote: adjudicated by someone else, or settled by
  the consensus of at least one other reviewer (consensus is unanimous, so the others alone
  reach the same outcome). Samples they alone reviewed, or adjudicated, are left out.
- **Cohen's κ** (unweighted) with each co-reviewer, over the samples both labelled; the
  categories are the labels either of them used.
- **Krippendorff's α contribution**: nominal α of every reviewer's labels of the field minus
  α of the same labels without this reviewer's; above 0 the reviewer raises the agreement,
  below 0 lowers it. Items: the samples labelled at least twice (the others enter no
  coincidence); n: those this reviewer labelled. On a large dataset the replicates are drawn
  in chunks of at most ``MAX_DRAWS`` draws, each seeded from the seed plus its first replicate.
- **median seconds per review**, **reject rate** (rejections / reviews) and **skip rate**
  (samples skipped / samples skipped, reviewed or answered as gold items: a gold item they
  skipped counts as a skip, one they answered as a sample they did not skip), over the
  reviewer's reviews or samples.

A label is None where a review says nothing about the field (a rejection has no category).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from core.stats.agreement import alpha_from_coincidences, cohen_kappa_from_table, item_coincidences
from core.stats.bootstrap import index_counts, percentile_interval, resample_indices, within_range
from core.stats.ratings import FloatArray, IntArray

N_REPLICATES = 1000
DECISION = "decision"


@dataclass(frozen=True)
class Vote:
    """One review: its reviewer, its sample (``unit``), its label per field, time, decision."""

    reviewer: int
    unit: int
    labels: Mapping[str, str | None]
    seconds: float
    rejected: bool


@dataclass(frozen=True)
class Settled:
    """A settled sample's labels per field, and who adjudicated it (None: the reviewers agreed)."""

    labels: Mapping[str, str | None]
    adjudicated_by: int | None = None


@dataclass(frozen=True)
class GoldResult:
    """One gold answer: per key of the expected answer, whether it matched."""

    reviewer: int
    matches: Mapping[str, bool]


@dataclass(frozen=True)
class Figure:
    """A value with its 95 % interval and the n it rests on (None: no items, or undefined).
    The names are the audit figures' (``ci_low``, ``ci_high``), so one template shows both."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


EMPTY = Figure(None, None, None, 0)


@dataclass(frozen=True)
class FieldQuality:
    field: str
    gold_accuracy: Figure
    outcome_agreement: Figure
    alpha_contribution: Figure
    kappas: dict[int, Figure]  # co-reviewer -> kappa


@dataclass(frozen=True)
class ReviewerQuality:
    reviewer: int
    reviews: int
    gold_accuracy: Figure
    median_seconds: Figure
    reject_rate: Figure
    skip_rate: Figure
    fields: tuple[FieldQuality, ...]


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _figure(point: float, replicates: FloatArray, n: int) -> Figure:
    if not np.isfinite(point):
        return Figure(None, None, None, n)
    low, high = percentile_interval(replicates)
    return Figure(float(point), _finite(low), _finite(high), n)


Draws = dict[tuple[int, int, int], IntArray]


def _draws(n: int, n_replicates: int, seed: int, kept: Draws | None = None) -> IntArray:
    """Replicates × items: the items each replicate drew (the audit's item bootstrap). Figures
    over as many items draw the same, so ``kept`` lets them share one draw."""
    if kept is None:
        return resample_indices(n, n_replicates, seed)
    key = (n, n_replicates, seed)
    if key not in kept:
        kept[key] = resample_indices(n, n_replicates, seed)
    return kept[key]


def _weights(n: int, n_replicates: int, seed: int) -> FloatArray:
    """Replicates × items: how often each item was drawn."""
    return index_counts(resample_indices(n, n_replicates, seed), n)


def proportion(
    outcomes: Sequence[bool],
    *,
    n_replicates: int = N_REPLICATES,
    seed: int = 0,
    kept: Draws | None = None,
) -> Figure:
    """The share of true outcomes, with its item-bootstrap interval."""
    n = len(outcomes)
    if n == 0:
        return EMPTY
    x = np.asarray(outcomes, dtype=np.float64)
    replicates = x[_draws(n, n_replicates, seed, kept)].sum(axis=1) / n
    return _figure(float(x.mean()), replicates, n)


def median(
    values: Sequence[float],
    *,
    n_replicates: int = N_REPLICATES,
    seed: int = 0,
    kept: Draws | None = None,
) -> Figure:
    """The median, with its item-bootstrap interval."""
    n = len(values)
    if n == 0:
        return EMPTY
    x = np.asarray(values, dtype=np.float64)
    replicates = np.median(x[_draws(n, n_replicates, seed, kept)], axis=1)
    return _figure(float(np.median(x)), replicates, n)


def kappa(
    first: Sequence[str],
    second: Sequence[str],
    *,
    n_replicates: int = N_REPLICATES,
    seed: int = 0,
    kept: Draws | None = None,
) -> Figure:
    """Unweighted Cohen's κ of two raters' labels of the same items, with its interval."""
    n = len(first)
    if n == 0:
        return EMPTY
    labels = sorted(set(first) | set(second))
    index = {label: i for i, label in enumerate(labels)}
    q = len(labels)
    cells = np.array([index[a] * q + index[b] for a, b in zip(first, second, strict=True)])
    point = cohen_kappa_from_table(np.bincount(cells, minlength=q * q).reshape(q, q).astype(float))
    # Each replicate's table counts the cells of the items it drew.
    drawn = cells[_draws(n, n_replicates, seed, kept)]
    offsets = np.arange(n_replicates)[:, None] * q * q
    flat = np.bincount((drawn + offsets).ravel(), minlength=n_replicates * q * q)
    tables = flat.reshape(n_replicates, q, q).astype(np.float64)
    replicates = within_range(cohen_kappa_from_table(tables))
    return _figure(float(within_range(point)), replicates, n)


# At most this many item draws are held at once: the replicates of a large dataset's alpha are
# drawn in chunks (each chunk seeded from the seed and its first replicate).
MAX_DRAWS = 2_000_000


def _nominal_alpha(summed: FloatArray, q: int) -> FloatArray:
    """Nominal alpha from summed coincidences (..., q²)."""
    values = np.arange(q, dtype=np.float64)
    shaped = summed.reshape(*summed.shape[:-1], q, q)
    return within_range(alpha_from_coincidences(shaped, values, "nominal"))


def alpha_contributions(
    votes: Sequence[Vote], field: str, reviewers: Sequence[int], *, n_replicates: int, seed: int
) -> dict[int, Figure]:
    """Per reviewer, α of every label of the field minus α without theirs, with its interval
    over replicates that resample the samples labelled at least twice (a sample labelled once
    enters no coincidence, with or without anyone)."""
    labelled = [(v.reviewer, v.unit, v.labels.get(field)) for v in votes]
    per_unit: dict[int, int] = defaultdict(int)
    for _r, unit, label in labelled:
        per_unit[unit] += label is not None
    paired = [(r, u, label) for r, u, label in labelled if label is not None and per_unit[u] >= 2]
    categories = {label: i for i, label in enumerate(sorted({x for _r, _u, x in paired}))}
    units: dict[int, int] = {}
    for _r, unit, _label in paired:
        units.setdefault(unit, len(units))
    n, q = len(units), len(categories)
    counts = np.zeros((n, q))
    codes: dict[int, dict[int, int]] = defaultdict(dict)
    for reviewer, unit, label in paired:
        counts[units[unit], categories[label]] += 1.0
        codes[reviewer][units[unit]] = categories[label]
    coincidences = item_coincidences(counts).reshape(n, q * q)
    changes: dict[int, tuple[list[int], FloatArray]] = {}
    for reviewer in reviewers:
        rows = list(codes.get(reviewer, {}))
        if not rows:
            continue
        without = counts[rows].copy()
        without[np.arange(len(rows)), list(codes[reviewer].values())] -= 1.0
        changes[reviewer] = (
            rows,
            coincidences[rows] - item_coincidences(without).reshape(len(rows), -1),
        )
    if not changes:
        return dict.fromkeys(reviewers, EMPTY)
    # A sample's coincidences fill a few of the q² cells: sparse products cost a fraction.
    sparse_coincidences = sparse.csr_matrix(coincidences)
    sparse_changes = {r: (rows, sparse.csr_matrix(change)) for r, (rows, change) in changes.items()}
    summed = np.empty((n_replicates, q * q))
    removed = {reviewer: np.empty((n_replicates, q * q)) for reviewer in changes}
    chunk = max(1, min(n_replicates, MAX_DRAWS // n))
    for first in range(0, n_replicates, chunk):
        size = min(chunk, n_replicates - first)
        by_sample = np.ascontiguousarray(_weights(n, size, seed + first).T)  # samples × draws
        summed[first : first + size] = (sparse_coincidences.T @ by_sample).T
        for reviewer, (rows, change) in sparse_changes.items():
            removed[reviewer][first : first + size] = (change.T @ by_sample[rows]).T
    total = coincidences.sum(axis=0)
    everyone = _nominal_alpha(summed, q)
    out = {}
    for reviewer in reviewers:
        if reviewer not in changes:
            out[reviewer] = EMPTY
            continue
        rows, change = changes[reviewer]
        point = _nominal_alpha(total, q) - _nominal_alpha(total - change.sum(axis=0), q)
        replicates = everyone - _nominal_alpha(summed - removed[reviewer], q)
        out[reviewer] = _figure(float(point), replicates, len(rows))
    return out


def _reference_ok(vote: Vote, settled: Settled, voters: Set[int]) -> bool:
    """Whether the settlement stands without this vote (see the module docstring)."""
    if settled.adjudicated_by is not None:
        return settled.adjudicated_by != vote.reviewer
    return bool(voters - {vote.reviewer})


def _outcome_agreement(
    votes: Sequence[Vote],
    field: str,
    settled: Mapping[int, Settled],
    voters: Mapping[int, Set[int]],
    **bootstrap: Any,
) -> Figure:
    outcomes = []
    for vote in votes:
        outcome = settled.get(vote.unit)
        label = vote.labels.get(field)
        if outcome is None or label is None or outcome.labels.get(field) is None:
            continue
        if _reference_ok(vote, outcome, voters[vote.unit]):
            outcomes.append(label == outcome.labels[field])
    return proportion(outcomes, **bootstrap)


def _kappas(
    votes_of: Mapping[int, list[Vote]],
    reviewer: int,
    field: str,
    cache: dict[tuple[str, int, int], Figure],
    **bootstrap: Any,
) -> dict[int, Figure]:
    """κ with each co-reviewer over the samples both labelled, in sample order; a pair's κ is
    the same either way round (computed once)."""
    mine = {v.unit: v.labels.get(field) for v in votes_of[reviewer]}
    out: dict[int, Figure] = {}
    for other, theirs in sorted(votes_of.items()):
        key = (field, min(reviewer, other), max(reviewer, other))
        if other == reviewer:
            continue
        if key not in cache:
            pairs = sorted(
                (v.unit, mine[v.unit], v.labels.get(field))
                for v in theirs
                if mine.get(v.unit) is not None and v.labels.get(field) is not None
            )
            if reviewer > other:
                pairs = [(unit, b, a) for unit, a, b in pairs]
            first = [a for _unit, a, _b in pairs]
            second = [b for _unit, _a, b in pairs]
            cache[key] = kappa(first, second, **bootstrap)  # type: ignore[arg-type]
        if cache[key].n:
            out[other] = cache[key]
    return out


def reviewer_quality(
    *,
    fields: Sequence[str],
    votes: Sequence[Vote],
    settled: Mapping[int, Settled],
    gold: Sequence[GoldResult],
    gold_counts: Mapping[int, tuple[int, int]],
    skipped: Mapping[int, Set[int]],
    reviewers: Sequence[int],
    n_replicates: int = N_REPLICATES,
    seed: int = 0,
    gold_answered: Mapping[int, Set[int]] | None = None,
) -> list[ReviewerQuality]:
    """The figures of each of ``reviewers`` (the others' votes still count as co-reviews).

    ``gold_counts``: per reviewer, their gold answers that matched in full, and in all;
    ``skipped``: the samples they skipped, gold items included; ``gold_answered``: the gold
    items they answered (samples they did not skip, for the skip rate).
    """
    # Draws shared by one reviewer's figures over as many items (dropped with the next one).
    kept: Draws = {}
    boot: dict[str, Any] = {"n_replicates": n_replicates, "seed": seed, "kept": kept}
    votes_of: dict[int, list[Vote]] = defaultdict(list)
    voters: dict[int, set[int]] = defaultdict(set)
    for vote in votes:
        votes_of[vote.reviewer].append(vote)
        voters[vote.unit].add(vote.reviewer)
    gold_of: dict[int, list[GoldResult]] = defaultdict(list)
    for answer in gold:
        gold_of[answer.reviewer].append(answer)
    alphas: dict[str, dict[int, Figure]] = {}
    for f in fields:
        alphas[f] = alpha_contributions(votes, f, reviewers, n_replicates=n_replicates, seed=seed)
    kappa_cache: dict[tuple[str, int, int], Figure] = {}
    out = []
    for reviewer in reviewers:
        kept.clear()
        mine = votes_of.get(reviewer, [])
        answers = gold_of.get(reviewer, [])
        correct, total = gold_counts.get(reviewer, (0, 0))
        reviewed = {v.unit for v in mine} | set((gold_answered or {}).get(reviewer, set()))
        skips = set(skipped.get(reviewer, set()))
        per_field = tuple(
            FieldQuality(
                field=f,
                gold_accuracy=proportion([a.matches[f] for a in answers if f in a.matches], **boot),
                outcome_agreement=_outcome_agreement(mine, f, settled, voters, **boot),
                alpha_contribution=alphas[f][reviewer],
                kappas=_kappas(votes_of, reviewer, f, kappa_cache, **boot) if mine else {},
            )
            for f in fields
        )
        out.append(
            ReviewerQuality(
                reviewer=reviewer,
                reviews=len(mine),
                gold_accuracy=proportion([True] * correct + [False] * (total - correct), **boot),
                median_seconds=median([v.seconds for v in mine], **boot),
                reject_rate=proportion([v.rejected for v in mine], **boot),
                skip_rate=proportion([u in skips for u in sorted(skips | reviewed)], **boot),
                fields=per_field,
            )
        )
    return out
