"""Tests for judging.leaderboard: per-judge and ensemble scores with their n."""

from __future__ import annotations

import pytest

from judging.leaderboard import CellSums, ScoreRow, build_leaderboard, leaderboard_from_sums

GROUPS = ["shifted_ic", "ooc"]


def row(model: str, judge: str, response: int, group: str, score: float, **kw: str) -> ScoreRow:
    return ScoreRow(
        model,
        judge,
        response,
        group,
        kw.get("category", "MP"),
        kw.get("format", "mcq"),
        kw.get("scenario", "math"),
        score,
        score,
        score,
    )


def test_ensemble_averages_judges_per_response_then_responses() -> None:
    """Response 1 scores (1 + .5)/2 and response 2 (0 + 0)/2: the ensemble mean is .375."""
    rows = [
        row("m", "j1", 1, "shifted_ic", 1.0),
        row("m", "j2", 1, "shifted_ic", 0.5),
        row("m", "j1", 2, "shifted_ic", 0.0),
        row("m", "j2", 2, "shifted_ic", 0.0),
    ]
    (board,) = build_leaderboard(rows, GROUPS)
    assert board.ensemble.overall.mean == pytest.approx(0.375)
    assert board.ensemble.overall.n == 2
    assert board.judges["j1"].overall.mean == pytest.approx(0.5)
    assert board.ensemble.groups["ooc"].n == 0 and board.ensemble.groups["ooc"].mean is None


def test_repeats_of_a_judge_are_averaged_before_counting() -> None:
    """Three repeats of one judge on one response count as one response (n = 1)."""
    rows = [row("m", "j", 7, "ooc", s) for s in (1.0, 0.5, 0.0)]
    (board,) = build_leaderboard(rows, GROUPS)
    assert board.judges["j"].groups["ooc"].n == 1
    assert board.judges["j"].groups["ooc"].mean == pytest.approx(0.5)


def test_breakdowns_by_category_format_and_scenario_carry_their_n() -> None:
    """Each stratum of a group has its own mean and n; models are ranked best first."""
    rows = [
        row("weak", "j", 1, "ooc", 0.0, category="VFP"),
        row("strong", "j", 2, "ooc", 1.0, category="VFP"),
        row("strong", "j", 3, "ooc", 0.5, category="MA", format="yesno"),
    ]
    boards = build_leaderboard(rows, GROUPS)
    assert [b.model for b in boards] == ["strong", "weak"]
    ooc = boards[0].ensemble.breakdowns["ooc"]
    assert ooc["category"]["VFP"].n == 1 and ooc["category"]["MA"].mean == 0.5
    assert ooc["format"]["mcq"].n == 1 and ooc["format"]["yesno"].n == 1
    assert ooc["scenario"]["math"].n == 2


def test_every_cell_carries_the_interval_of_its_mean_score() -> None:
    """Four responses scoring 0 or 1: Wilson's interval around the mean; the one-response
    stratum has none and says why; sums kept without squares say they wait."""
    rows = [row("m", "j", i, "ooc", float(i % 2), category=f"c{min(i, 1)}") for i in range(4)]
    (board,) = build_leaderboard(rows, GROUPS)
    overall = board.ensemble.overall
    assert overall.ci_method == "wilson" and overall.no_ci_reason == ""
    assert overall.ci95_low is not None and overall.ci95_high is not None
    assert overall.ci95_low < 0.5 < overall.ci95_high
    alone = board.ensemble.breakdowns["ooc"]["category"]["c0"]
    assert (alone.n, alone.ci95_low, alone.no_ci_reason) == (1, None, "n_below_2")
    old = CellSums("m", None, "ooc", "category", "c0", 4, 2.0)
    (kept,) = leaderboard_from_sums([old], GROUPS)
    assert kept.ensemble.overall.no_ci_reason == "not_recomputed"
    assert kept.ensemble.overall.ci95_low is None
