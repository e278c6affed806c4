"""Ratings as an items × raters matrix of category indices, NaN where a rating is missing.

Category order: if every label parses as a number the categories are sorted numerically and
their numeric values are used as the interval scale; otherwise labels are sorted as strings
(so the order never depends on row order) and the interval scale is the rank 0, 1, 2, ….
Pass ``categories=`` explicitly whenever the order matters and the labels are not numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

Level = Literal["nominal", "ordinal", "interval"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval")
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _as_number(label: str) -> float | None:
    try:
        value = float(label)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def order_categories(labels: Iterable[str]) -> list[str]:
    """Distinct labels in scale order: numerically if all are numbers, else as sorted strings."""
    distinct = set(labels)
    numbers = {label: _as_number(label) for label in distinct}
    if distinct and all(value is not None for value in numbers.values()):
        return sorted(distinct, key=lambda label: (numbers[label], label))
    return sorted(distinct)


def category_values(categories: Sequence[str]) -> FloatArray:
    """Numeric scale values of the categories: the numbers themselves, or ranks if any is not."""
    numbers = [_as_number(label) for label in categories]
    if categories and all(value is not None for value in numbers):
        return np.array(numbers, dtype=np.float64)
    return np.arange(len(categories), dtype=np.float64)


def is_numeric(categories: Sequence[str]) -> bool:
    """Whether every category label is a finite number (an interval scale exists)."""
    return all(_as_number(label) is not None for label in categories)


@dataclass(frozen=True)
class Ratings:
    """Category indices (float, NaN = missing) of shape items × raters, plus the scale."""

    codes: FloatArray
    categories: tuple[str, ...]
    values: FloatArray
    items: tuple[str, ...] = ()
    raters: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.codes.ndim != 2:
            raise ValueError("codes must be a 2-D items × raters array")
        if len(self.values) != len(self.categories):
            raise ValueError("values must have one entry per category")
        observed = self.codes[~np.isnan(self.codes)]
        if observed.size and (observed.min() < 0 or observed.max() >= len(self.categories)):
            raise ValueError("codes must index into categories")

    @property
    def n_items(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_raters(self) -> int:
        return int(self.codes.shape[1])

    @property
    def n_categories(self) -> int:
        return len(self.categories)

    def category_counts(self) -> FloatArray:
        """Items × categories matrix: how many raters put each item in each category."""
        counts = np.zeros((self.n_items, self.n_categories), dtype=np.float64)
        rows, cols = np.nonzero(~np.isnan(self.codes))
        np.add.at(counts, (rows, self.codes[rows, cols].astype(np.int64)), 1.0)
        return counts

    def take(self, indices: Sequence[int] | IntArray) -> Ratings:
        """The ratings of the given items (repeats allowed, as in a bootstrap resample)."""
        index = np.asarray(indices, dtype=np.int64)
        items = tuple(self.items[i] for i in index) if self.items else ()
        return Ratings(self.codes[index], self.categories, self.values, items, self.raters)


def from_matrix(
    matrix: npt.ArrayLike,
    categories: Sequence[float] | None = None,
) -> Ratings:
    """Ratings from a numeric items × raters matrix (NaN = missing); categories are its values.

    ``categories`` lists every possible value (unused ones included) when the scale is known.
    """
    data = np.asarray(matrix, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError("expected an items × raters matrix")
    observed = np.unique(data[~np.isnan(data)])
    scale = np.asarray(sorted(categories), dtype=np.float64) if categories is not None else observed
    missing = np.setdiff1d(observed, scale)
    if missing.size:
        raise ValueError(f"values {missing.tolist()} are not among the categories")
    codes = np.full(data.shape, np.nan)
    present = ~np.isnan(data)
    codes[present] = np.searchsorted(scale, data[present])
    labels = tuple(f"{value:g}" for value in scale)
    return Ratings(codes, labels, scale.copy())


def from_labels(
    rows: Sequence[Sequence[str | None]],
    categories: Sequence[str] | None = None,
    items: Sequence[str] = (),
    raters: Sequence[str] = (),
) -> Ratings:
    """Ratings from an items × raters table of string labels (None or "" = missing)."""
    seen = [label for row in rows for label in row if label]
    order = list(categories) if categories is not None else order_categories(seen)
    index = {label: position for position, label in enumerate(order)}
    unknown = sorted({label for label in seen if label not in index})
    if unknown:
        raise ValueError(f"labels {unknown} are not among the categories")
    width = max((len(row) for row in rows), default=0)
    codes = np.full((len(rows), width), np.nan)
    for i, row in enumerate(rows):
        for j, label in enumerate(row):
            if label:
                codes[i, j] = index[label]
    return Ratings(codes, tuple(order), category_values(order), tuple(items), tuple(raters))
