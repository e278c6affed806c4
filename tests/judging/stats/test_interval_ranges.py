"""Every interval lies within its statistic's possible range, on random small data.

Property tests (hypothesis) over the project's interval functions: the human-vs-judge report,
the inter-rater bootstrap, the calibration ECE and the audit-corrected scores. Small samples
are where intervals escape their range (a normal interval around a mean of 0.97 on five items,
a percentile of replicates of a figure undefined on most of them), so that is what is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.stats.bootstrap import bootstrap_figures, percentile_interval
from core.stats.ratings import from_labels
from judging.stats.confidence import calibration_report
from judging.stats.corrected import corrected_scores
from judging.stats.human_judge import Figure, human_judge_report

REPLICATES = 40
# The possible range of every figure: chance-corrected agreement cannot go below -1, shares
# stay in [0, 1], differences of scores in [0, 1] stay in [-1, 1].
RANGES = {
    "percent_agreement": (0.0, 1.0),
    "cohen_kappa": (-1.0, 1.0),
    "gwet_ac1": (-1.0, 1.0),
    "pabak": (-1.0, 1.0),
    "prevalence_index": (-1.0, 1.0),
    "bias_index": (-1.0, 1.0),
    "sensitivity": (0.0, 1.0),
    "specificity": (0.0, 1.0),
    "mean_signed_difference": (-1.0, 1.0),
    "fleiss_kappa": (-1.0, 1.0),
    "krippendorff_alpha": (-1.0, 1.0),
    "ece": (0.0, 1.0),
    "score": (0.0, 1.0),
}
EPS = 1e-9
PROPERTY = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


def _within(name: str, value: float | None, low: float | None, high: float | None) -> None:
    lowest, highest = RANGES[name]
    for bound in (value, low, high):
        if bound is None or not math.isfinite(bound):
            continue
        assert lowest - EPS <= bound <= highest + EPS, (name, value, low, high)
    if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
        assert low <= high + EPS, (name, low, high)


def _figures(comparison: Any) -> Iterator[tuple[str, Figure]]:
    for name in RANGES:
        figure = getattr(comparison, name, None)
        if isinstance(figure, Figure):
            yield name, figure


@st.composite
def audits(draw: st.DrawFn) -> dict[str, Any]:
    """A small audit: 2-12 items, binary or quarter-score labels, 1-3 judges, gaps."""
    n = draw(st.integers(2, 12))
    numeric = draw(st.booleans())
    labels = ["0", "0.25", "0.5", "0.75", "1"] if numeric else ["refused", "answered"]
    label = st.one_of(st.none(), st.sampled_from(labels))
    judges = {
        f"j{k}": draw(st.lists(label, min_size=n, max_size=n))
        for k in range(draw(st.integers(1, 3)))
    }
    return {
        "human": draw(st.lists(label, min_size=n, max_size=n)),
        "judges": judges,
        "labels": labels,
        "scale": draw(st.sampled_from(["ordinal", "interval"])) if numeric else "nominal",
        "positive": None if numeric else "refused",
        "second": draw(st.lists(label, min_size=n, max_size=n)),
        "weights": draw(st.lists(st.floats(0.1, 5.0), min_size=n, max_size=n)),
        "groups": draw(st.lists(st.sampled_from(["a", "b", None]), min_size=n, max_size=n)),
        "seed": draw(st.integers(0, 1000)),
    }


@PROPERTY
@given(audits())
def test_human_vs_judge_intervals_stay_in_range(audit: dict[str, Any]) -> None:
    """Every figure of every comparison (judges, ensemble, second human, breakdowns)."""
    report = human_judge_report(
        audit["human"],
        audit["judges"],
        audit["labels"],
        scale=audit["scale"],
        positive=audit["positive"],
        second_human=audit["second"],
        item_weights=audit["weights"],
        groups={"category": audit["groups"]},
        n_replicates=REPLICATES,
        seed=audit["seed"],
    )
    comparisons = [*report.overall.values(), report.human_human]
    for raters in report.breakdowns.get("category", {}).values():
        comparisons.extend(raters.values())
    for comparison in comparisons:
        if comparison is None:
            continue
        for name, figure in _figures(comparison):
            _within(name, figure.value, figure.ci_low, figure.ci_high)


@st.composite
def panels(draw: st.DrawFn) -> tuple[list[list[str | None]], list[str], str]:
    n = draw(st.integers(2, 12))
    numeric = draw(st.booleans())
    labels = ["0", "0.5", "1"] if numeric else ["a", "b", "c"][: draw(st.integers(2, 3))]
    raters = draw(st.integers(2, 4))
    label = st.one_of(st.none(), st.sampled_from(labels))
    rows = draw(st.lists(st.lists(label, min_size=raters, max_size=raters), min_size=n, max_size=n))
    level = draw(st.sampled_from(["ordinal", "interval"])) if numeric else "nominal"
    return rows, labels, level


@PROPERTY
@given(panels(), st.integers(0, 1000))
def test_inter_rater_intervals_stay_in_range(
    panel: tuple[list[list[str | None]], list[str], str], seed: int
) -> None:
    """Percent agreement, Krippendorff's alpha, Fleiss' kappa, Gwet's AC1, pairwise kappa."""
    rows, labels, level = panel
    ratings = from_labels(rows, categories=labels)
    result = bootstrap_figures(ratings, level, REPLICATES, seed)  # type: ignore[arg-type]
    point, reps = result.point, result.replicates
    for name in ("percent_agreement", "krippendorff_alpha", "fleiss_kappa", "gwet_ac1"):
        value = float(getattr(point, name)[0])
        low, high = percentile_interval(getattr(reps, name))
        _within(name, value, low, high)
    for pair, kappa in point.cohen_kappa.items():
        low, high = percentile_interval(reps.cohen_kappa[pair])
        _within("cohen_kappa", float(kappa[0]), low, high)


@PROPERTY
@given(audits())
def test_calibration_error_intervals_stay_in_range(audit: dict[str, Any]) -> None:
    """The ECE of every judge (repeated votes give confidences below 1)."""
    votes = {
        judge: [[v, audit["human"][i]] for i, v in enumerate(values)]
        for judge, values in audit["judges"].items()
    }
    report = calibration_report(
        votes,
        audit["human"],
        audit["labels"],
        positive=audit["positive"],
        n_replicates=REPLICATES,
        seed=audit["seed"],
    )
    for calibration in report.values():
        ece = calibration.overall.ece
        _within("ece", ece.value, ece.ci_low, ece.ci_high)


@PROPERTY
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["m1", "m2"]),
            st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
            st.one_of(st.just(math.nan), st.sampled_from([0.0, 0.5, 1.0])),
            st.sampled_from(["s1", "s2"]),
        ),
        min_size=1,
        max_size=14,
    ),
    st.booleans(),
    st.sampled_from([1.0, None]),
)
def test_corrected_score_intervals_stay_in_range(
    rows: list[tuple[str, float, float, str]], stratified: bool, lam: float | None
) -> None:
    """A model's score lies in [0, 1]: its judge-only and audit-corrected intervals too."""
    models = [r[0] for r in rows]
    scores = corrected_scores(
        models,
        np.array([r[1] for r in rows]),
        np.array([r[2] for r in rows]),
        strata=[r[3] for r in rows] if stratified else None,
        lam=lam,
    )
    for score in scores:
        u = score.uncorrected
        _within("score", u.estimate, u.ci_low, u.ci_high)
        if score.corrected is not None:
            c = score.corrected
            _within("score", c.estimate, c.ci_low, c.ci_high)
