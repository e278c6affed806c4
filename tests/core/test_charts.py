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


def test_a_scatter_places_points_and_whiskers_on_its_axes() -> None:
    """x runs from 0 to the largest x, y from 1 at the top to 0 at the bottom; the whisker
    spans the interval and a point without one has none."""
    chart = charts.scatter([("a", 4, 0.5, 0.25, 1.0), ("b", 2, 1.0, None, None)])
    a, b = chart["points"]
    assert (a["cx"], a["cy"]) == (chart["right"], 110.0)
    assert (a["y_low"], a["y_high"]) == (160.0, chart["top"])
    assert b["cx"] == chart["left"] + (chart["right"] - chart["left"]) / 2 and b["y_low"] is None
    assert [t["label"] for t in chart["x_ticks"]] == ["0", "1", "2", "3", "4"]


def test_an_empty_scatter_has_axes_and_no_points() -> None:
    chart = charts.scatter([])
    assert chart["points"] == [] and [t["label"] for t in chart["x_ticks"]] == ["0", "1"]
