"""The 95 % interval of a leaderboard cell's mean score, from the sums the cell keeps.

A cell keeps, over its responses (each response's score first averaged over a judge's
repeats, then over the judges for the ensemble; every score is in [0, 1]): their number n,
the sum of their scores, the sum of their squares and how many of them are exactly 0 or 1.
From these alone (no per-response scores, so no bootstrap):

- ``wilson``: when every response scored 0 or 1 the mean is a proportion (successes = the
  sum), and the interval is Wilson's score interval (Wilson 1927);
- ``wilson_effective_n``: otherwise Wilson's interval at the mean p̂ with the effective number
  of responses n·p̂(1 − p̂)/s² (s² the sample variance, (Σx² − (Σx)²/n)/(n − 1)): a score in
  [0, 1] with mean p̂ varies at most as a 0-or-1 score does, p̂(1 − p̂), and scores that vary
  less count as more responses (the design-effect adjustment of Korn and Graubard 1998). When
  every score is equal (s² below ``NOISE``: rounding) there is no spread to estimate, and the
  interval takes the widest one, n responses;
- none when n < 2 (``MISSING_N``: one response has no spread to measure), or when the cell was
  computed before its sum of squares was kept (``MISSING_NOT_RECOMPUTED``).

Both stay inside [0, 1] and are never empty at a mean of 0 or 1. Student's t-interval from
the same sums was tried first and left: on simulated cells of scores in quarters with a mean
of 0.99 it covered the mean in 85 % of cells of 40 responses and in 22 % of cells of 5 (its
interval is a point when the few scores are all equal); this one in 96 % and 98 %, and from
93 % to 98 % at means from 0.02 to 0.99 (tests/judging/stats/test_score_interval.py).

Pure: no Django, no scipy (a page's request computes it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

LEVEL = 0.95
# The standard normal's 0.975 quantile (scipy.stats.norm.ppf(0.975)).
Z = 1.959963984540054
Method = Literal["wilson", "wilson_effective_n"]
WILSON: Method = "wilson"
WILSON_EFFECTIVE_N: Method = "wilson_effective_n"
MISSING_N = "n_below_2"
MISSING_NOT_RECOMPUTED = "not_recomputed"
# Scores are in [0, 1]: a variance this small is float rounding of equal scores (distinct
# scores on a grid of quarters averaged over judges give variances many orders above it).
NOISE = 1e-12


@dataclass(frozen=True)
class ScoreInterval:
    """A mean's 95 % interval: its bounds and method, or why there is none."""

    low: float | None
    high: float | None
    method: Method | None
    missing: str = ""


def wilson(p: float, n: float) -> tuple[float, float]:
    """Wilson's 95 % score interval of a proportion ``p`` observed over ``n`` > 0 trials
    (``n`` may be an effective, fractional number)."""
    z2n = Z * Z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = Z / (1 + z2n) * math.sqrt(max(p * (1 - p) / n + z2n / (4 * n), 0.0))
    low = 0.0 if p <= 0.0 else max(centre - half, 0.0)
    high = 1.0 if p >= 1.0 else min(centre + half, 1.0)
    return low, high


def effective_n(n: int, total: float, squares: float) -> float:
    """The number of 0-or-1 responses whose mean is as precise as these n scores' (n ≥ 2,
    mean strictly between 0 and 1)."""
    mean = total / n
    variance = (squares - total * total / n) / (n - 1)
    if variance < NOISE:
        return float(n)
    return n * mean * (1 - mean) / variance


def score_interval(
    n: int, total: float, squares: float | None, binary: int | None
) -> ScoreInterval:
    """The 95 % interval of a cell's mean score from its number of responses, sum of
    scores, sum of squared scores and number of scores that are 0 or 1: Wilson's when all n
    are (``binary == n``), else Wilson's at the effective n; none below 2 responses or
    without the sums."""
    if n < 2:
        return ScoreInterval(None, None, None, MISSING_N)
    if squares is None or binary is None:
        return ScoreInterval(None, None, None, MISSING_NOT_RECOMPUTED)
    mean = min(max(total / n, 0.0), 1.0)
    if binary == n:
        low, high = wilson(mean, n)
        return ScoreInterval(low, high, WILSON)
    low, high = wilson(mean, effective_n(n, total, squares))
    return ScoreInterval(low, high, WILSON_EFFECTIVE_N)
