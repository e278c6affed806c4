"""The pure core of ``manage.py agreement``: read long-format ratings, report every figure.

Input: a CSV with header ``item,rater,label`` (UTF-8, with or without BOM); an empty label
is a missing rating, blank lines are ignored. Items and raters are sorted by name so the
matrix, the pair keys and the seeded bootstrap do not depend on row order.

Output (JSON-ready, undefined values as None): ``n_items``, ``n_raters``, ``level``,
``categories`` and, for each figure, ``{"value", "ci95": [lo, hi], "n"}`` where n counts
the items the figure rests on (rated at least twice; for a pair, rated by both). Intervals
are 95 % percentiles over the replicates where the figure is defined, null when fewer than
half are (or when the point value itself is undefined). Fleiss'
kappa and Gwet's AC1 are the unweighted (nominal) coefficients at every level; alpha uses
the requested level; pairwise Cohen's kappa is unweighted for nominal, linearly weighted for
ordinal and quadratically weighted for interval data. Ordinal and interval levels need
numeric labels (their order and spacing cannot be guessed from text).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import numpy as np

from core.stats.bootstrap import bootstrap_figures, percentile_interval
from core.stats.ratings import LEVELS, FloatArray, Level, Ratings, from_labels, is_numeric

HEADER = ["item", "rater", "label"]


def _number_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def read_long_csv(path: str | Path) -> tuple[list[str], list[str], dict[tuple[str, str], str]]:
    """(items, raters, {(item, rater): label}) from a long-format CSV; ValueError on bad input."""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise ValueError(f"{path}: empty file, expected the header item,rater,label") from None
    if [field.strip().lower() for field in header] != HEADER:
        raise ValueError(
            f"{path}, line 1: expected the header item,rater,label, got {','.join(header)!r}"
        )
    labels: dict[tuple[str, str], str] = {}
    first_line: dict[tuple[str, str], int] = {}
    try:
        for row in reader:
            line = reader.line_num
            if not row or all(not field.strip() for field in row):
                continue
            if len(row) != 3:
                raise ValueError(f"{path}, line {line}: expected 3 fields, got {len(row)}")
            item, rater, label = (field.strip() for field in row)
            if not item or not rater:
                raise ValueError(f"{path}, line {line}: item and rater must not be empty")
            key = (item, rater)
            if key in labels:
                raise ValueError(
                    f"{path}, line {line}: rater {rater!r} already rated item {item!r} "
                    f"on line {first_line[key]}"
                )
            labels[key] = label
            first_line[key] = line
    except csv.Error as error:
        raise ValueError(f"{path}, line {reader.line_num}: {error}") from None
    if not labels:
        raise ValueError(f"{path}: no ratings after the header")
    items = sorted({item for item, _ in labels})
    raters = sorted({rater for _, rater in labels})
    return items, raters, labels


def ratings_from_csv(path: str | Path) -> Ratings:
    """The items × raters :class:`Ratings` of a long-format CSV."""
    items, raters, labels = read_long_csv(path)
    rows = [[labels.get((item, rater)) for rater in raters] for item in items]
    return from_labels(rows, items=items, raters=raters)


def _figure(point: FloatArray, replicates: FloatArray, n: int) -> dict[str, Any]:
    value = _number_or_none(float(point[0]))
    low, high = percentile_interval(replicates) if replicates.size else (math.nan, math.nan)
    if value is None:
        low = high = math.nan
    return {"value": value, "ci95": [_number_or_none(low), _number_or_none(high)], "n": n}


def agreement_report(
    path: str | Path, level: str = "nominal", n_bootstrap: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Every agreement figure of the ratings in ``path`` with item-bootstrap 95% intervals."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    if n_bootstrap < 0:
        raise ValueError("the number of bootstrap replicates must not be negative")
    checked_level: Level = level  # type: ignore[assignment]
    ratings = ratings_from_csv(path)
    if checked_level != "nominal" and not is_numeric(ratings.categories):
        text = [label for label in ratings.categories if not is_numeric([label])]
        raise ValueError(
            f"{path}: level {level!r} needs numeric labels, got {', '.join(map(repr, text[:3]))}"
        )
    result = bootstrap_figures(ratings, checked_level, n_bootstrap, seed)
    point, reps = result.point, result.replicates
    rated = (~np.isnan(ratings.codes)).sum(axis=1)
    n_multi = int((rated >= 2).sum())
    pairwise: dict[str, Any] = {}
    for (a, b), kappa in point.cohen_kappa.items():
        both = int((~np.isnan(ratings.codes[:, a]) & ~np.isnan(ratings.codes[:, b])).sum())
        key = f"{ratings.raters[a]}|{ratings.raters[b]}"
        pairwise[key] = _figure(kappa, reps.cohen_kappa[(a, b)], both)
    return {
        "n_items": ratings.n_items,
        "n_raters": ratings.n_raters,
        "level": level,
        "categories": list(ratings.categories),
        "percent_agreement": _figure(point.percent_agreement, reps.percent_agreement, n_multi),
        "krippendorff_alpha": _figure(point.krippendorff_alpha, reps.krippendorff_alpha, n_multi),
        "fleiss_kappa": _figure(point.fleiss_kappa, reps.fleiss_kappa, n_multi),
        "gwet_ac1": _figure(point.gwet_ac1, reps.gwet_ac1, n_multi),
        "cohen_kappa_pairwise": pairwise,
    }
