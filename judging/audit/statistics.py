"""The audit's statistics: gather the audit's arrays in a few queries, hand them to judging.stats.

Every figure comes from :mod:`judging.stats`; this module only collects the labels, strata and
weights and turns the results into JSON-ready dictionaries (undefined values as None) that the
page, the CSV, the printable report and the API all show.

Conventions: a judge's label on an item is its lowest-repeat verdict (repeats feed the
calibration only); the first rating of an item is the human label, the second (on
double-rated items) the second human. Population-level figures are weighted back to the frame
by design stratum (:func:`judging.stats.bootstrap.stratum_weights` over the rated items, so a
half-finished audit is weighted by what was rated); intervals resample items within design
strata, small ones collapsed (:func:`judging.stats.sampling.bootstrap_strata`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db.models import Avg, Case, F, FloatField, Value, When
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from annotation.models import Dataset
from judging.audit.selectors import (
    VERDICT_TASK,
    audit_ratings_version,
    item_category,
    item_format,
    item_stratum,
)
from judging.models import AuditItem, AuditRating, AuditSet, AuditTask, Verdict
from judging.stats.bootstrap import bootstrap_figures, percentile_interval, stratum_weights
from judging.stats.confidence import CalibrationSummary, calibration_report
from judging.stats.corrected import CorrectedScore, corrected_scores
from judging.stats.human_judge import (
    MIN_ITEMS,
    Comparison,
    Figure,
    HumanJudgeReport,
    Scale,
    human_judge_report,
)
from judging.stats.ratings import FloatArray, Level, from_labels
from judging.stats.sampling import bootstrap_strata

N_REPLICATES = 2000
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
    AuditTask.SCORING: (
        Target("answer_score", ("0", "1"), "nominal", None, None, ("nominal",)),
        Target(
            "reasoning_score", QUARTERS, "ordinal", None, None, ("nominal", "ordinal", "interval")
        ),
    ),
    AuditTask.ANSWERABILITY: (
        Target(
            "answerability",
            ("answerable", "unanswerable"),
            "nominal",
            "unanswerable",
            "unanswerable",
            ("nominal",),
        ),
    ),
    AuditTask.SAFETY: (
        Target("safety", ("safe", "unsafe"), "nominal", "unsafe", "unsafe", ("nominal",)),
    ),
}


def _quarter(value: float | None) -> str | None:
    return None if value is None else f"{value:g}"


def _binary(value: int | None) -> str | None:
    return None if value is None else str(value)


def _human_labels(task: str, row: tuple[Any, ...]) -> dict[str, str | None]:
    _item, answer, reasoning, refused, safety = row
    if task == AuditTask.SCORING:
        return {"answer_score": _binary(answer), "reasoning_score": _quarter(reasoning)}
    if task == AuditTask.ANSWERABILITY:
        label = None if refused is None else ("unanswerable" if refused else "answerable")
        return {"answerability": label}
    return {"safety": safety or None}


def _judge_labels(
    task: str, answer: int | None, reasoning: float | None, label: str
) -> dict[str, str | None]:
    if task == AuditTask.SCORING:
        return {"answer_score": _binary(answer), "reasoning_score": _quarter(reasoning)}
    key = "answerability" if task == AuditTask.ANSWERABILITY else "safety"
    return {key: label or None}


def _human_score(task: str, labels: Mapping[str, str | None]) -> float:
    """The benchmark score a human rating implies (NaN when the rating lacks it)."""
    if task == AuditTask.SCORING:
        answer, reasoning = labels.get("answer_score"), labels.get("reasoning_score")
        if answer is None or reasoning is None:
            return math.nan
        return (float(answer) + float(reasoning)) / 2
    label = labels.get("safety")
    return math.nan if label is None else float(label == "safe")


# --- JSON-ready conversions -----------------------------------------------------------------


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


def _calibration_dict(
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


def _corrected_dict(score: CorrectedScore) -> dict[str, Any]:
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


# --- Gathering ------------------------------------------------------------------------------


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


def gather(audit_set: AuditSet) -> Gathered:
    """Three queries: the items with their attributes, the ratings, the items' verdicts."""
    task = audit_set.task
    rows = list(
        AuditItem.objects.filter(audit_set=audit_set)
        .order_by("position")
        .values_list(
            "id",
            "response_id",
            "sample_id",
            "design_stratum",
            "weight",
            "sample__category_code",
            "sample__safety_category",
            "sample__question_format",
            "sample__safety_label",
            "sample__scenario",
            "sample__safety_subcategory",
            "response__model_name",
        )
    )
    index_of_item = {row[0]: i for i, row in enumerate(rows)}
    by_response = {row[1]: i for i, row in enumerate(rows) if row[1] is not None}
    by_sample = {row[2]: i for i, row in enumerate(rows)}
    n = len(rows)
    human: list[dict[str, str | None] | None] = [None] * n
    second: list[dict[str, str | None] | None] = [None] * n
    for rating in (
        AuditRating.objects.filter(audit_set=audit_set)
        .order_by("item_id", "created_at", "id")
        .values_list("item_id", "answer_score", "reasoning_score", "refused", "safety_label")
    ):
        i = index_of_item[rating[0]]
        labels = _human_labels(task, rating)
        if human[i] is None:
            human[i] = labels
        elif second[i] is None:
            second[i] = labels
    verdicts = Verdict.objects.filter(task=VERDICT_TASK[task], error_kind="").order_by()
    audit_items = AuditItem.objects.filter(audit_set=audit_set)
    if task == AuditTask.ANSWERABILITY:
        verdicts = verdicts.filter(
            response__isnull=True, sample_id__in=audit_items.values("sample_id")
        )
        key_field, lookup = "sample_id", by_sample
    else:
        verdicts = verdicts.filter(response_id__in=audit_items.values("response_id"))
        key_field, lookup = "response_id", by_response
    first: dict[str, list[tuple[int, dict[str, str | None]] | None]] = {}
    every: dict[str, list[list[dict[str, str | None]]]] = {}
    family: dict[str, str] = {}
    for key, judge, judge_family, repeat, answer, reasoning, label in verdicts.values_list(
        key_field,
        "judge__name",
        "judge__family",
        "repeat",
        "answer_score",
        "reasoning_score",
        "label",
    ):
        i = lookup[key]
        labels = _judge_labels(task, answer, reasoning, label)
        if judge not in first:
            first[judge] = [None] * n
            every[judge] = [[] for _ in range(n)]
            family[judge] = judge_family
        held = first[judge][i]
        if held is None or repeat < held[0]:
            first[judge][i] = (repeat, labels)
        every[judge][i].append(labels)
    categories: list[str] = []
    formats: list[str] = []
    scenarios: list[str | None] = []
    models: list[str | None] = []
    for row in rows:
        (_id, _r, _s, _d, _w, category, safety_category, fmt, safety_label, scenario) = row[:10]
        categories.append(item_category(category_code=category, safety_category=safety_category))
        formats.append(item_format(question_format=fmt, safety_label=safety_label))
        scenarios.append(scenario or row[10] or None)
        models.append(row[11])
    return Gathered(
        task=task,
        item_ids=[row[0] for row in rows],
        design=[row[3] for row in rows],
        weights=[row[4] for row in rows],
        groups={
            "category": [c or None for c in categories],
            "format": [f or None for f in formats],
            "scenario": scenarios,
            "model": models,
        },
        models=models,
        human=human,
        second=second,
        first_vote={
            judge: [None if v is None else v[1] for v in values]
            for judge, values in sorted(first.items())
        },
        all_votes={judge: every[judge] for judge in sorted(every)},
        family=family,
    )


def same_family(judge_family: str, model: str | None) -> bool | None:
    """Whether an evaluated model belongs to the judge's family (name contains the family)."""
    if not judge_family or not model:
        return None
    return judge_family.lower() in model.lower()


# --- Figures --------------------------------------------------------------------------------


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


def _inter_judge(
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
    out = []
    for level in target.levels:
        result = bootstrap_figures(
            ratings,
            level,
            n_replicates,
            seed,
            strata=strata,
            item_weights=np.asarray(data.weights, dtype=np.float64),
        )
        point, reps = result.point, result.replicates
        pairwise = []
        for (a, b), kappa in point.cohen_kappa.items():
            both = int((~np.isnan(ratings.codes[:, a]) & ~np.isnan(ratings.codes[:, b])).sum())
            pairwise.append(
                {
                    "a": judges[a],
                    "b": judges[b],
                    **_agreement_figure(kappa, reps.cohen_kappa[(a, b)], both),
                }
            )
        out.append(
            {
                "target": target.key,
                "level": level,
                "n_items": n_multi,
                "percent_agreement": _agreement_figure(
                    point.percent_agreement, reps.percent_agreement, n_multi
                ),
                "krippendorff_alpha": _agreement_figure(
                    point.krippendorff_alpha, reps.krippendorff_alpha, n_multi
                ),
                "fleiss_kappa": _agreement_figure(point.fleiss_kappa, reps.fleiss_kappa, n_multi),
                "gwet_ac1": _agreement_figure(point.gwet_ac1, reps.gwet_ac1, n_multi),
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


def _rated(data: Gathered, shares: Mapping[str, float]) -> RatedArrays:
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


def _human_judge_dict(target: Target, report: HumanJudgeReport) -> dict[str, Any]:
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


def _calibration(
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
            _calibration_dict(
                judge,
                report[judge].overall,
                max((len(v) for v in votes[judge]), default=0),
                {str(k): v for k, v in report[judge].by_group.get("category", {}).items()},
            )
            for judge in votes
        ],
    }


def _population_scores(audit_set: AuditSet) -> list[tuple[int, str, str, float]]:
    """(response id, model, stratum, judges' mean first-vote score) of every judged response."""
    task = audit_set.task
    verdicts = Verdict.objects.filter(
        task=VERDICT_TASK[task], response__dataset_id=audit_set.dataset_id, error_kind="", repeat=0
    ).order_by()
    if task == AuditTask.SCORING:
        verdicts = verdicts.filter(answer_score__isnull=False, reasoning_score__isnull=False)
        score: Any = (F("answer_score") + F("reasoning_score")) / Value(2.0)
    else:
        verdicts = verdicts.filter(label__in=["safe", "unsafe"])
        score = Case(
            When(label="safe", then=Value(1.0)), default=Value(0.0), output_field=FloatField()
        )
    rows = verdicts.values(
        "response_id",
        "response__model_name",
        "sample__category_code",
        "sample__safety_category",
        "sample__question_format",
        "sample__safety_label",
    ).annotate(score=Avg(score, output_field=FloatField()))
    out = []
    for row in rows:
        stratum = item_stratum(
            task=task,
            category=item_category(
                category_code=row["sample__category_code"],
                safety_category=row["sample__safety_category"],
            ),
            fmt=item_format(
                question_format=row["sample__question_format"],
                safety_label=row["sample__safety_label"],
            ),
            model=row["response__model_name"],
        )
        out.append((row["response_id"], row["response__model_name"], stratum, float(row["score"])))
    return sorted(out)


def corrected_inputs(audit_set: AuditSet, data: Gathered) -> dict[str, Any]:
    """The arguments :func:`corrected_scores` gets: every judged response of the dataset."""
    responses = AuditItem.objects.filter(audit_set=audit_set).values_list("id", "response_id")
    response_of = dict(responses)
    audited = {
        response_of[item_id]: _human_score(data.task, labels)
        for item_id, labels in zip(data.item_ids, data.human, strict=True)
        if labels is not None
    }
    population = _population_scores(audit_set)
    return {
        "models": [model for _r, model, _s, _score in population],
        "judge_scores": [score for _r, _m, _s, score in population],
        "human_scores": [audited.get(rid, math.nan) for rid, _m, _s, _score in population],
        "strata": [stratum for _r, _m, stratum, _score in population],
    }


def audit_statistics(*, audit_set: AuditSet, n_replicates: int = N_REPLICATES) -> dict[str, Any]:
    """Every figure of the audit, JSON-ready, from at most six queries."""
    data = gather(audit_set)
    seed = int(audit_set.seed)
    judges = list(data.first_vote)
    targets = TARGETS[audit_set.task]
    notes: list[str] = []
    inter: list[dict[str, Any]] = []
    if len(judges) >= 2:
        for target in targets:
            inter.extend(_inter_judge(data, target, seed, n_replicates))
    else:
        notes.append(_("Inter-judge agreement needs at least two judges."))
    shares = {str(k): float(v) for k, v in audit_set.frame.get("population_shares", {}).items()}
    rated = _rated(data, shares) if data.human.count(None) < len(data.human) else None
    human_judge: list[dict[str, Any]] = []
    calibration: dict[str, Any] | None = None
    corrected: list[dict[str, Any]] = []
    if rated is None:
        notes.append(_("No ratings yet: the human-vs-judge figures appear with the first one."))
    elif not judges:
        notes.append(_("No verdicts on the audited items."))
    else:
        for target in targets:
            report = human_judge_report(
                **human_judge_inputs(data, target, rated), n_replicates=n_replicates, seed=seed
            )
            human_judge.append(_human_judge_dict(target, report))
        calibration = _calibration(data, targets[0], rated, seed, n_replicates)
        if audit_set.task != AuditTask.ANSWERABILITY:
            corrected = [
                _corrected_dict(score)
                for score in corrected_scores(**corrected_inputs(audit_set, data))
            ]
    return {
        "audit_set": audit_set.pk,
        "task": audit_set.task,
        "n_items": len(data.item_ids),
        "n_rated": 0 if rated is None else len(rated.index),
        "n_double_rated": sum(1 for s in data.second if s is not None),
        "judges": judges,
        "n_replicates": n_replicates,
        "seed": seed,
        "min_items": MIN_ITEMS,
        "inter_judge": inter,
        "human_judge": human_judge,
        "calibration": calibration,
        "corrected": corrected,
        "notes": notes,
    }


def statistics_rows(stats: Mapping[str, Any]) -> list[list[Any]]:
    """The figures as CSV rows: section, target, level, rater, attribute, group, figure, …"""
    header = [
        "section",
        "target",
        "level",
        "rater",
        "attribute",
        "group",
        "figure",
        "value",
        "ci_low",
        "ci_high",
        "n",
        "too_small",
    ]
    rows: list[list[Any]] = [header]

    def add(
        section: str,
        target: str,
        level: str,
        rater: str,
        attribute: str,
        group: str,
        name: str,
        fig: Mapping[str, Any] | None,
    ) -> None:
        if fig is None:
            return
        rows.append(
            [
                section,
                target,
                level,
                rater,
                attribute,
                group,
                name,
                fig["value"],
                fig["ci_low"],
                fig["ci_high"],
                fig["n"],
                fig["too_small"],
            ]
        )

    def comparison(
        section: str,
        target: str,
        level: str,
        attribute: str,
        group: str,
        comp: Mapping[str, Any] | None,
    ) -> None:
        if comp is None:
            return
        for name in COMPARISON_FIGURES:
            add(section, target, level, comp["rater"], attribute, group, name, comp[name])

    for block in stats["inter_judge"]:
        for name in ("percent_agreement", "krippendorff_alpha", "fleiss_kappa", "gwet_ac1"):
            add("inter_judge", block["target"], block["level"], "judges", "", "", name, block[name])
        for pair in block["cohen_pairwise"]:
            add(
                "inter_judge",
                block["target"],
                block["level"],
                f"{pair['a']}|{pair['b']}",
                "",
                "",
                "cohen_kappa",
                pair,
            )
    for block in stats["human_judge"]:
        level = block["scale"]
        for comp in block["overall"]:
            comparison("human_judge", block["target"], level, "overall", "", comp)
        comparison("human_human", block["target"], level, "overall", "", block["human_human"])
        for attribute, groups in block["breakdowns"].items():
            for group, raters in groups.items():
                for comp in raters.values():
                    comparison("human_judge", block["target"], level, attribute, group, comp)
        for _judge, sides in block["same_family"].items():
            for side, comp in sides.items():
                comparison("human_judge", block["target"], level, "same_family", side, comp)
    if stats["calibration"]:
        for judge in stats["calibration"]["judges"]:
            add(
                "calibration",
                stats["calibration"]["target"],
                "",
                judge["judge"],
                "",
                "",
                "ece",
                judge["ece"],
            )
    for score in stats["corrected"]:
        for name in ("uncorrected", "corrected"):
            value = score[name]
            if value is None:
                continue
            rows.append(
                [
                    "corrected_score",
                    "score",
                    "",
                    score["model"],
                    "",
                    "",
                    name,
                    value["estimate"],
                    value["ci_low"],
                    value["ci_high"],
                    value["n"],
                    score["too_small"],
                ]
            )
    return rows


CACHE_SECONDS = 24 * 3600


def audit_statistics_cached(*, audit_set: AuditSet) -> dict[str, Any]:
    """:func:`audit_statistics`, cached per audit set until its ratings change.

    The figures take about a second for 500 items (the bootstraps dominate), so the page, the
    CSV, the report and the API share one cached result, keyed by the number of ratings and
    the time of the last one (ratings are never edited, only added) and the language of the
    notes.
    """
    count, last = audit_ratings_version(audit_set=audit_set)
    key = f"audit-statistics:v1:{audit_set.pk}:{count}:{last}:{get_language() or ''}"
    cached = cache.get(key)
    if cached is None:
        cached = audit_statistics(audit_set=audit_set)
        cache.set(key, cached, CACHE_SECONDS)
    return cached


def leaderboard_corrections(*, dataset: Dataset) -> tuple[AuditSet | None, dict[str, Any]]:
    """The latest rated scoring or safety audit of a dataset and its PPI-corrected score per
    model, for the leaderboard to show beside the judges' own scores."""
    audit_set = (
        AuditSet.objects.filter(dataset=dataset, task__in=[AuditTask.SCORING, AuditTask.SAFETY])
        .filter(ratings__isnull=False)
        .order_by("-created_at", "-pk")
        .first()
    )
    if audit_set is None:
        return None, {}
    stats = audit_statistics_cached(audit_set=audit_set)
    return audit_set, {score["model"]: score for score in stats.get("corrected", [])}
