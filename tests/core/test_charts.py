"""Chart geometry (core/charts.py): bars scale to the largest value, one row each."""

from __future__ import annotations

from core import charts


def test_bars_scale_to_the_largest_value_by_row() -> None:
    """The largest value fills the chart; each bar sits one row below the previous."""
    chart = charts.bars([("a", 2), ("b", 4), ("c", 0)])
    assert [(b.length, b.offset) for b in chart] == [(180, 0), (360, 24), (0, 48)]


def test_a_chart_of_zeros_draws_empty_bars() -> None:
    """All-zero values give zero-length bars rather than a division by zero."""
    assert [b.length for b in charts.bars([("a", 0), ("b", 0)])] == [0, 0]
