"""Geometry of the site's inline SVG charts (no Django): bar charts, heatmaps, forest plots,
score distributions and reliability diagrams, laid out as plain numbers for the templates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CELL = 44
LABEL = 90
PLOT_W = 360
ROW_H = 22


def heatmap(confusion: Sequence[Sequence[int]], labels: Sequence[str]) -> dict[str, Any]:
    """Cells of a confusion matrix (rows human, columns judge), shaded by count."""
    top = max((c for row in confusion for c in row), default=0) or 1
    cells = [
        {
            "x": LABEL + j * CELL,
            "y": 20 + i * CELL,
            "count": count,
            "opacity": round(0.08 + 0.92 * count / top, 3),
            "dark": count / top > 0.5,
            "diagonal": i == j,
        }
        for i, row in enumerate(confusion)
        for j, count in enumerate(row)
    ]
    return {
        "cells": cells,
        "cell": CELL,
        "half": CELL // 2,
        "rows": [
            {"label": label, "y": 20 + i * CELL + CELL // 2} for i, label in enumerate(labels)
        ],
        "cols": [
            {"label": label, "x": LABEL + j * CELL + CELL // 2} for j, label in enumerate(labels)
        ],
        "width": LABEL + CELL * len(labels) + 10,
        "height": 20 + CELL * len(labels) + 10,
    }


def _x(value: float, low: float, high: float) -> float:
    return round(LABEL + 10 + (min(max(value, low), high) - low) / (high - low) * PLOT_W, 1)


def forest(
    rows: Sequence[Mapping[str, Any]], low: float = -1.0, high: float = 1.0
) -> dict[str, Any]:
    """One row per group: a point and its interval on a [low, high] axis.

    ``rows`` carry ``label`` and a figure dict (value, ci_low, ci_high, n, too_small).
    """
    out = []
    for i, row in enumerate(rows):
        fig = row["figure"]
        y = 20 + i * ROW_H
        value = fig["value"]
        out.append(
            {
                "label": row["label"],
                "y": y,
                "text_y": y + 4,
                "n": fig["n"],
                "too_small": fig["too_small"],
                "x": None if value is None else _x(value, low, high),
                "x_low": None if fig["ci_low"] is None else _x(fig["ci_low"], low, high),
                "x_high": None if fig["ci_high"] is None else _x(fig["ci_high"], low, high),
                "value": value,
            }
        )
    ticks = [low + k * (high - low) / 4 for k in range(5)]
    height = 30 + ROW_H * max(len(rows), 1)
    return {
        "rows": out,
        "ticks": [{"x": _x(t, low, high), "label": f"{t:g}"} for t in ticks],
        "zero_x": _x(0.0, low, high) if low < 0 < high else None,
        "axis_y": height - 6,
        "height": height + 8,
        "width": LABEL + 10 + PLOT_W + 70,
        "plot_left": LABEL + 10,
        "plot_right": LABEL + 10 + PLOT_W,
    }


def distribution(
    labels: Sequence[str], human: Sequence[int], judge: Sequence[int]
) -> dict[str, Any]:
    """Paired bars per label: the share of items the human and the judge gave each label."""
    total_h, total_j = sum(human) or 1, sum(judge) or 1
    height = 120
    group = 2 * 22 + 14
    bars = []
    for k in range(len(labels)):
        x = 30 + k * group
        for offset, (who, counts, total) in enumerate(
            (("human", human, total_h), ("judge", judge, total_j))
        ):
            share = counts[k] / total
            h = round(share * height, 1)
            bars.append(
                {
                    "who": who,
                    "x": x + offset * 22,
                    "y": round(10 + height - h, 1),
                    "h": h,
                    "share": share,
                    "count": counts[k],
                }
            )
    return {
        "bars": bars,
        "labels": [{"label": label, "x": 30 + k * group + 22} for k, label in enumerate(labels)],
        "base_y": 10 + height,
        "height": height + 40,
        "width": 30 + group * len(labels) + 10,
    }


def reliability(bins: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A reliability diagram: accuracy against mean confidence per non-empty bin."""
    size = 200
    points = []
    for b in bins:
        if not b["count"] or b["confidence"] is None or b["accuracy"] is None:
            continue
        points.append(
            {
                "cx": round(30 + b["confidence"] * size, 1),
                "cy": round(10 + (1 - b["accuracy"]) * size, 1),
                "r": round(min(3 + b["count"] ** 0.5, 12), 1),
                "count": b["count"],
                "confidence": b["confidence"],
                "accuracy": b["accuracy"],
            }
        )
    return {
        "points": points,
        "size": size,
        "left": 30,
        "top": 10,
        "right": 30 + size,
        "bottom": 10 + size,
        "width": size + 50,
        "height": size + 40,
    }


@dataclass(frozen=True)
class Bar:
    """One bar of a horizontal bar chart: its length in chart units and its row's offset."""

    label: str
    value: float
    length: int
    offset: int


BAR_ROW, BAR_LENGTH = 24, 360


def bars(items: Sequence[tuple[str, float]]) -> list[Bar]:
    """Bars scaled to the largest value (a chart of zeros draws empty bars)."""
    top = max((value for _label, value in items), default=0) or 1
    return [
        Bar(label, value, round(BAR_LENGTH * value / top), BAR_ROW * row)
        for row, (label, value) in enumerate(items)
    ]


def scatter(
    points: Sequence[tuple[str, float, float, float | None, float | None]],
) -> dict[str, Any]:
    """Points (label, x, y, y_low, y_high) with vertical interval whiskers: y on [0, 1], x from
    0 to the largest x; e.g. each reviewer's gold accuracy against their number of reviews."""
    left, top, width, height = 50, 10, PLOT_W, 200
    top_x = max((x for _label, x, _y, _low, _high in points), default=0) or 1

    def px(x: float) -> float:
        return round(left + x / top_x * width, 1)

    def py(y: float) -> float:
        return round(top + (1 - min(max(y, 0.0), 1.0)) * height, 1)

    return {
        "points": [
            {
                "label": label,
                "x": x,
                "y": y,
                "cx": px(x),
                "cy": py(y),
                "y_low": None if low is None else py(low),
                "y_high": None if high is None else py(high),
                "text_x": px(x) + 6,
                "text_y": py(y) - 6,
            }
            for label, x, y, low, high in points
        ],
        "x_ticks": [
            {"x": px(tick), "label": str(tick)}
            for tick in sorted({round(top_x * k / 4) for k in range(5)})
        ],
        "y_ticks": [{"y": py(k / 4), "label": f"{k / 4:g}"} for k in range(5)],
        "left": left,
        "right": left + width,
        "top": top,
        "bottom": top + height,
        "label_y": top + height + 30,
        "width": left + width + 90,
        "height": top + height + 40,
    }
