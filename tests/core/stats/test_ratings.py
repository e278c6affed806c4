"""Tests for core.stats.ratings: the items × raters representation and category order."""

import numpy as np
import pytest

from core.stats.ratings import (
    Ratings,
    category_values,
    from_labels,
    from_matrix,
    is_numeric,
    order_categories,
)


def test_numeric_labels_sort_numerically() -> None:
    """Numeric labels are ordered by value, so "10" comes after "9", not after "1"."""
    assert order_categories(["10", "9", "1", "2.5", "9"]) == ["1", "2.5", "9", "10"]
    assert category_values(["1", "2.5", "9", "10"]).tolist() == [1.0, 2.5, 9.0, 10.0]


def test_text_labels_sort_as_strings_and_use_ranks() -> None:
    """Text labels are sorted as strings (independent of row order) and spaced by rank."""
    assert order_categories(["unsafe", "refuse", "safe", "refuse"]) == [
        "refuse",
        "safe",
        "unsafe",
    ]
    assert category_values(["refuse", "safe", "unsafe"]).tolist() == [0.0, 1.0, 2.0]
    assert not is_numeric(["1", "two"])


def test_from_labels_marks_missing_and_counts_categories() -> None:
    """Empty strings and None are missing; category counts tally raters per item."""
    ratings = from_labels([["a", "b", ""], [None, "a", "a"]], raters=["x", "y", "z"])
    assert ratings.categories == ("a", "b")
    assert np.isnan(ratings.codes[0, 2]) and np.isnan(ratings.codes[1, 0])
    assert ratings.category_counts().tolist() == [[1.0, 1.0], [2.0, 0.0]]


def test_from_labels_explicit_categories_keep_unused_ones() -> None:
    """An explicit category list keeps unused categories and rejects unknown labels."""
    ratings = from_labels([["low", "high"]], categories=["low", "mid", "high"])
    assert ratings.codes.tolist() == [[0.0, 2.0]]
    assert ratings.n_categories == 3
    with pytest.raises(ValueError, match="not among the categories"):
        from_labels([["low", "extreme"]], categories=["low", "high"])


def test_from_matrix_uses_values_as_scale() -> None:
    """A numeric matrix keeps its values as the interval scale, unused categories included."""
    ratings = from_matrix([[1.0, 5.0], [np.nan, 1.0]], categories=[1, 3, 5])
    assert ratings.categories == ("1", "3", "5")
    assert ratings.values.tolist() == [1.0, 3.0, 5.0]
    assert ratings.codes[0].tolist() == [0.0, 2.0]
    with pytest.raises(ValueError, match="not among the categories"):
        from_matrix([[1.0, 2.0]], categories=[1, 3])


def test_take_repeats_items() -> None:
    """take() returns the resampled items in order, repeats included."""
    ratings = from_labels([["a", "a"], ["b", "a"]], items=["i1", "i2"])
    sample = ratings.take([1, 1, 0])
    assert sample.items == ("i2", "i2", "i1")
    assert sample.codes[:, 0].tolist() == [1.0, 1.0, 0.0]


def test_codes_outside_the_categories_are_rejected() -> None:
    """A code that does not index a category is an error, not a silent miscount."""
    with pytest.raises(ValueError, match="index into categories"):
        Ratings(np.array([[0.0, 2.0]]), ("a", "b"), np.array([0.0, 1.0]))
