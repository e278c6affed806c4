"""The audit's statistics: gather its arrays (selectors), compute and shape every figure
(:mod:`judging.audit.report` over :mod:`judging.stats`). Run by a worker only: the result is
stored (:mod:`judging.audit.computations`) and pages read it.

Conventions: a judge's label on an item is its lowest-repeat verdict (repeats feed the
calibration only); the first rating of an item is the human label, the second (on
double-rated items) the second human. Population-level figures are weighted back to the frame
by design stratum (:func:`core.stats.bootstrap.stratum_weights` over the rated items, so a
half-finished audit is weighted by what was rated); intervals resample items within design
strata, small ones collapsed (:func:`judging.stats.sampling.bootstrap_strata`).

The numeric modules (numpy, scipy) are imported when figures are computed, not when this
module is: every web process imports it (the leaderboard, the audit pages), few compute.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from judging.audit import rubric, selectors
from judging.audit.report_rows import statistics_rows
from judging.models import AuditSet, AuditTask

__all__ = ["audit_statistics", "statistics_rows"]

N_REPLICATES = 2000


def audit_statistics(*, audit_set: AuditSet, n_replicates: int = N_REPLICATES) -> dict[str, Any]:
    """Every figure of the audit, JSON-ready, from at most six queries."""
    from judging.audit import report
    from judging.stats.corrected import corrected_scores
    from judging.stats.human_judge import MIN_ITEMS, human_judge_report

    data = selectors.audit_gather(audit_set)
    seed = int(audit_set.seed)
    judges = list(data.first_vote)
    targets = report.TARGETS[audit_set.task]
    notes: list[str] = []
    inter: list[dict[str, Any]] = []
    if len(judges) >= 2:
        for target in targets:
            inter.extend(report.inter_judge(data, target, seed, n_replicates))
    else:
        notes.append(_("Inter-judge agreement needs at least two judges."))
    shares = {str(k): float(v) for k, v in audit_set.frame.get("population_shares", {}).items()}
    rated = report.rated_arrays(data, shares) if data.human.count(None) < len(data.human) else None
    human_judge: list[dict[str, Any]] = []
    calibration: dict[str, Any] | None = None
    corrected: list[dict[str, Any]] = []
    if rated is None:
        notes.append(_("No ratings yet: the human-vs-judge figures appear with the first one."))
    elif not judges:
        notes.append(_("No verdicts on the audited items."))
    else:
        for target in targets:
            figures = human_judge_report(
                **report.human_judge_inputs(data, target, rated),
                n_replicates=n_replicates,
                seed=seed,
            )
            human_judge.append(report.human_judge_dict(target, figures))
        calibration = report.calibration(data, targets[0], rated, seed, n_replicates)
        if audit_set.task != AuditTask.ANSWERABILITY:
            inputs = report.corrected_inputs(
                data,
                selectors.audit_item_responses(audit_set=audit_set),
                selectors.audit_population_scores(audit_set),
                lambda labels: rubric.human_score(audit_set.task, labels),
            )
            corrected = [report.corrected_dict(score) for score in corrected_scores(**inputs)]
    return {
        "audit_set": audit_set.pk,
        "task": audit_set.task,
        "n_items": len(data.item_ids),
        "n_rated": 0 if rated is None else len(rated.index),
        "n_double_rated": sum(1 for s in data.second if s is not None),
        # Whether the rated items' weights differ (an oversampled design): the human-vs-judge
        # population figures are then weighted back to the frame.
        "human_design_weighted": rated is not None and len(set(rated.weights.tolist())) > 1,
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
