"""The audit's figures from its gathered arrays, JSON-ready, and the same as CSV rows.

No Django: :mod:`judging.audit.selectors` gathers the arrays, :mod:`judging.stats` computes
every figure, and this module picks the inputs and shapes the results (undefined values as
None) for the page, the CSV, the printable report and the API.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.stats.bootstrap import (
    bootstrap_figures,
    figures_from_weights,
    item_statistics,
    percentile_interval,
    stratum_weights,
)
from core.stats.ratings import FloatArray, Level, from_labels
from judging.stats.confidence import CalibrationSummary, calibration_report
from judging.stats.corrected import CorrectedScore
from judging.stats.human_judge import (
    MIN_ITEMS,
    Comparison,
    Figure,
    HumanJudgeReport,
    Scale,
)
from judging.stats.sampling import bootstrap_strata

QUARTERS = ("0", "0.25", "0.5", "0.75", "1")
GROUP_ATTRIBUTES = ("category", "format", "scenario", "model")


@dataclass(frozen=True)
class Target:
    """One thing the judges and the auditors both rate, with how to compare it."""

    key: str
    labels: tuple[str, ...]
    scale: Scale
    positive: str | None
    tie_label: str | None
    levels: tuple[Level, ...]


TARGETS: dict[str, tuple[Target, ...]] = {
    "scoring": (
        Target("answer_score", ("0", "1"), "nominal", None, None, ("nominal",)),
        Target(
            "reasoning_score", QUARTERS, "ordinal", None, None, ("nominal", "ordinal", "interval")
        ),
    ),
    "answerability": (
        Target(
            "answerability",
            ("answerable", "unanswerable"),
            "nominal",
            "unanswerable",
            "unanswerable",
            ("nominal",),
        ),
    ),
    "safety": (Target("safety", ("safe", "unsafe"), "nominal", "unsafe", "unsafe", ("nominal",)),),
}


def _number(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def figure_dict(figure: Figure | None) -> dict[str, Any] | None:
    if figure is None:
        return None
    return {
        "value": _number(figure.value),
        "ci_low": _number(figure.ci_low),
        "ci_high": _number(figure.ci_high),
        "n": figure.n,
        "too_small": figure.too_small,
    }


COMPARISON_FIGURES = (
    "percent_agreement",
    "cohen_kappa",
    "gwet_ac1",
    "pabak",
    "prevalence_index",
    "bias_index",
    "sensitivity",
    "specificity",
    "mean_signed_difference",
)


def comparison_dict(comparison: Comparison | None) -> dict[str, Any] | None:
    if comparison is None:
        return None
    out: dict[str, Any] = {
        "rater": comparison.rater,
        "n": comparison.n,
        "labels": list(comparison.labels),
        "confusion": [[round(float(c)) for c in row] for row in comparison.confusion],
    }
    for name in COMPARISON_FIGURES:
        out[name] = figure_dict(getattr(comparison, name))
    return out


def calibration_dict(
    judge: str,
    summary: CalibrationSummary,
    repeats: int,
    by_category: Mapping[str, CalibrationSummary] | None = None,
) -> dict[str, Any]:
    return {
        "judge": judge,
        "max_repeats": repeats,
        "ece": figure_dict(summary.ece),
        "by_category": [
            {"category": category, "ece": figure_dict(part.ece)}
            for category, part in sorted((by_category or {}).items())
        ],
        "bins": [
            {
                "lower": b.lower,
                "upper": b.upper,
                "confidence": _number(b.confidence),
                "accuracy": _number(b.accuracy),
                "count": b.count,
            }
            for b in summary.bins
        ],
    }


def corrected_dict(score: CorrectedScore) -> dict[str, Any]:
    corrected = None
    if score.corrected is not None:
        corrected = {
            "estimate": _number(score.corrected.estimate),
            "ci_low": _number(score.corrected.ci_low),
            "ci_high": _number(score.corrected.ci_high),
            "n": score.corrected.n_labelled,
        }
    return {
        "model": score.model,
        "n_responses": score.n_responses,
        "n_audited": score.n_audited,
        "uncorrected": {
            "estimate": _number(score.uncorrected.estimate),
            "ci_low": _number(score.uncorrected.ci_low),
            "ci_high": _number(score.uncorrected.ci_high),
            "n": score.uncorrected.n,
        },
        "corrected": corrected,
        "stratified": score.stratified,
        "too_small": score.too_small,
        "warnings": list(score.warnings),
    }


@dataclass
class Gathered:
    """The audit's arrays, one entry per audit item in drawn order."""

    task: str
    item_ids: list[int]
    design: list[str]
    weights: list[float]
    groups: dict[str, list[str | None]]
    models: list[str | None]
    human: list[dict[str, str | None] | None]
    second: list[dict[str, str | None] | None]
    # judge → per item: the labels of the lowest repeat, and every repeat's labels.
    first_vote: dict[str, list[dict[str, str | None] | None]]
    all_votes: dict[str, list[list[dict[str, str | None]]]]
    family: dict[str, str]


def same_family(judge_family: str, model: str | None) -> bool | None:
    """Whether an evaluated model belongs to the judge's family (name contains the family)."""
    if not judge_family or not model:
        return None
    return judge_family.lower() in model.lower()


def _agreement_figure(point: FloatArray, replicates: FloatArray, n: int) -> dict[str, Any]:
    value = float(point[0])
    low, high = percentile_interval(replicates) if replicates.size else (math.nan, math.nan)
    if not math.isfinite(value):
        low = high = math.nan
    return {
        "value": _number(value),
        "ci_low": _number(low),
        "ci_high": _number(high),
        "n": n,
        "too_small": n < MIN_ITEMS,
    }


def inter_judge(
    data: Gathered, target: Target, seed: int, n_replicates: int
) -> list[dict[str, Any]]:
    judges = list(data.first_vote)
    rows = [
        [None if votes[i] is None else votes[i][target.key] for votes in data.first_vote.values()]  # type: ignore[index]
        for i in range(len(data.item_ids))
    ]
    ratings = from_labels(rows, categories=target.labels, raters=judges)
    rated = (~np.isnan(ratings.codes)).sum(axis=1)
    n_multi = int((rated >= 2).sum())
    strata = bootstrap_strata(data.design)
    weights = np.asarray(data.weights, dtype=np.float64)
    # Weighted back to the frame by design stratum; the unweighted figure (every audit item
    # counted once, what a library computes on the same ratings) is shown beside it.
    design_weighted = bool(weights.size) and float(np.ptp(weights)) > 1e-12
    out = []
    for level in target.levels:
        result = bootstrap_figures(
            ratings, level, n_replicates, seed, strata=strata, item_weights=weights
        )
        point, reps = result.point, result.replicates
        plain = figures_from_weights(item_statistics(ratings, level), np.ones((1, len(rows))))

        def figure(
            weighted: FloatArray, replicates: FloatArray, unweighted: FloatArray, n: int
        ) -> dict[str, Any]:
            return {
                **_agreement_figure(weighted, replicates, n),
                "unweighted": _number(float(unweighted[0])),
                "design_weighted": design_weighted,
            }

        pairwise = []
        for (a, b), kappa in point.cohen_kappa.items():
            both = int((~np.isnan(ratings.codes[:, a]) & ~np.isnan(ratings.codes[:, b])).sum())
            pairwise.append(
                {
                    "a": judges[a],
                    "b": judges[b],
                    **figure(kappa, reps.cohen_kappa[(a, b)], plain.cohen_kappa[(a, b)], both),
                }
            )
        out.append(
            {
                "target": target.key,
                "level": level,
                "n_items": n_multi,
                "design_weighted": design_weighted,
                "percent_agreement": figure(
                    point.percent_agreement,
                    reps.percent_agreement,
                    plain.percent_agreement,
                    n_multi,
                ),
                "krippendorff_alpha": figure(
                    point.krippendorff_alpha,
                    reps.krippendorff_alpha,
                    plain.krippendorff_alpha,
                    n_multi,
                ),
                "fleiss_kappa": figure(
                    point.fleiss_kappa, reps.fleiss_kappa, plain.fleiss_kappa, n_multi
                ),
                "gwet_ac1": figure(point.gwet_ac1, reps.gwet_ac1, plain.gwet_ac1, n_multi),
                "cohen_pairwise": pairwise,
            }
        )
    return out


@dataclass(frozen=True)
class RatedArrays:
    """The rated items only: what the human-vs-judge figures rest on."""

    index: list[int]
    strata: list[str]
    weights: FloatArray


def rated_arrays(data: Gathered, shares: Mapping[str, float]) -> RatedArrays:
    index = [i for i, labels in enumerate(data.human) if labels is not None]
    design = [data.design[i] for i in index]
    weights = stratum_weights(design, {key: shares[key] for key in set(design)})
    return RatedArrays(index, bootstrap_strata(design), weights)


def human_judge_inputs(data: Gathered, target: Target, rated: RatedArrays) -> dict[str, Any]:
    """The arguments :func:`human_judge_report` gets (exposed for tests that recompute)."""
    idx = rated.index

    def pick(labels: dict[str, str | None] | None) -> str | None:
        return None if labels is None else labels.get(target.key)

    judges = {judge: [pick(votes[i]) for i in idx] for judge, votes in data.first_vote.items()}
    families = {
        judge: [same_family(data.family[judge], data.models[i]) for i in idx] for judge in judges
    }
    return {
        "human": [pick(data.human[i]) for i in idx],
        "judges": judges,
        "labels": target.labels,
        "scale": target.scale,
        "positive": target.positive,
        "tie_label": target.tie_label,
        "second_human": [pick(data.second[i]) for i in idx],
        "strata": rated.strata,
        "item_weights": rated.weights,
        "groups": {
            attribute: [data.groups[attribute][i] for i in idx]
            for attribute in GROUP_ATTRIBUTES
            if any(data.groups[attribute][i] is not None for i in idx)
        },
        "same_family": {
            judge: flags for judge, flags in families.items() if any(f is not None for f in flags)
        },
    }


def human_judge_dict(target: Target, report: HumanJudgeReport) -> dict[str, Any]:
    ordered = sorted(report.overall.items(), key=lambda kv: (kv[0] == "ensemble", kv[0]))
    return {
        "target": target.key,
        "labels": list(report.labels),
        "scale": report.scale,
        "positive": report.positive,
        "overall": [comparison_dict(c) for _name, c in ordered],
        "human_human": comparison_dict(report.human_human),
        "breakdowns": {
            attribute: {
                group: {rater: comparison_dict(c) for rater, c in raters.items()}
                for group, raters in groups.items()
            }
            for attribute, groups in report.breakdowns.items()
        },
        "same_family": {
            judge: {("same" if flag else "other"): comparison_dict(c) for flag, c in flags.items()}
            for judge, flags in report.same_family.items()
        },
        "ensemble_ties": report.ensemble_ties,
        "notes": list(report.notes),
    }


def calibration(
    data: Gathered, target: Target, rated: RatedArrays, seed: int, n_replicates: int
) -> dict[str, Any]:
    idx = rated.index
    votes = {
        judge: [[v.get(target.key) for v in per_item[i]] for i in idx]
        for judge, per_item in data.all_votes.items()
    }
    human = [None if data.human[i] is None else data.human[i].get(target.key) for i in idx]  # type: ignore[union-attr]
    report = calibration_report(
        votes,
        human,
        target.labels,
        positive=target.positive,
        groups={"category": [data.groups["category"][i] for i in idx]},
        strata=rated.strata,
        item_weights=rated.weights,
        n_replicates=n_replicates,
        seed=seed,
    )
    return {
        "target": target.key,
        "positive": target.positive,
        "judges": [
            calibration_dict(
                judge,
                report[judge].overall,
                max((len(v) for v in votes[judge]), default=0),
                {str(k): v for k, v in report[judge].by_group.get("category", {}).items()},
            )
            for judge in votes
        ],
    }


def corrected_inputs(
    data: Gathered,
    response_of: Mapping[int, int | None],
    population: Sequence[tuple[int, str, str, float]],
    human_score: Callable[[Mapping[str, str | None]], float],
) -> dict[str, Any]:
    """The arguments :func:`corrected_scores` gets: every judged response of the dataset
    (``population``: response id, model, stratum, judges' score), with the human score of
    the audited ones."""
    audited = {
        response_of[item_id]: human_score(labels)
        for item_id, labels in zip(data.item_ids, data.human, strict=True)
        if labels is not None
    }
    return {
        "models": [model for _r, model, _s, _score in population],
        "judge_scores": [score for _r, _m, _s, score in population],
        "human_scores": [audited.get(rid, math.nan) for rid, _m, _s, _score in population],
        "strata": [stratum for _r, _m, stratum, _score in population],
    }
