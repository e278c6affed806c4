"""Figures computed off the request path: requesting them when their data changes, running
them in a worker, and reading what was stored (see :mod:`judging.models.computations`).

A request queues the row's task a few seconds later (``COMPUTE_DELAY_SECONDS``), so that a
burst of ratings or judge chunks costs one computation. The run is a recoverable job
(``core.jobs``): claimed, beating a heartbeat, fenced by its attempt; the sweep runs again a
computation whose worker died, so none stays "computing" for ever. The request, the run and
what pages read are the generic ``core.computations``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext

from annotation.models import Dataset, JobStatus, WebhookEvent
from annotation.webhooks.services import webhook_event_emit
from core import computations, jobs
from core.computations import Stored, stored_state
from core.jobs import SweepResult
from core.tasks import enqueue
from judging import leaderboard_store
from judging.audit import selectors, statistics
from judging.models import (
    SCORING_TASKS,
    AuditComputation,
    AuditSet,
    AuditTask,
    ComputationKind,
)

TASK_NAME = "judging.compute_audit_figures"
COMPUTE_DELAY_SECONDS = 5.0
AUDIT_TASK_OF: dict[str, str] = {v: k for k, v in selectors.VERDICT_TASK.items()}


def _scope(kind: str, dataset_id: int, task: str, audit_set_id: int | None) -> dict[str, Any]:
    if kind == ComputationKind.AUDIT_STATISTICS:
        return {"kind": kind, "audit_set_id": audit_set_id}
    return {"kind": kind, "dataset_id": dataset_id, "task": task}


def _request(
    kind: str, *, dataset_id: int, task: str, audit_set_id: int | None = None, send: bool = True
) -> int:
    """Mark the row's data as changed; queue its computation unless one is already queued (a
    running one is followed by another when it ends). Returns the row's id."""
    return computations.computation_request(
        AuditComputation,
        scope=_scope(kind, dataset_id, task, audit_set_id),
        fields={"dataset_id": dataset_id, "task": task},
        send=_send if send else None,
    )


def _send(pk: int) -> None:
    jobs.job_enqueue(
        AuditComputation, pk, lambda: enqueue(TASK_NAME, pk, countdown=COMPUTE_DELAY_SECONDS)
    )


def _on_commit_request(kind: str, **scope: Any) -> None:
    transaction.on_commit(lambda: _request(kind, **scope))


def audit_statistics_request(*, audit_set: AuditSet) -> None:
    """Queue (after the current transaction commits) the audit's figures to be computed."""
    _on_commit_request(
        ComputationKind.AUDIT_STATISTICS,
        dataset_id=audit_set.dataset_id,
        task=audit_set.task,
        audit_set_id=audit_set.pk,
    )


def frame_strata_request(*, dataset_id: int, task: str) -> None:
    """Queue (on commit) the strata of a task's sampling frame to be counted again."""
    _on_commit_request(ComputationKind.FRAME_STRATA, dataset_id=dataset_id, task=task)


def dataset_figures_request(*, dataset_id: int, judge_tasks: Iterable[str] | None = None) -> None:
    """The verdicts or responses of a dataset changed (a judge job ended, an import): count its
    frames again and recompute the figures of its drawn audits, whose corrected scores read
    every verdict, and its leaderboard. ``judge_tasks`` limits the frames to those of the
    verdicts' tasks."""
    if judge_tasks is None or set(judge_tasks) & set(SCORING_TASKS):
        leaderboard_store.leaderboard_request_on_commit(dataset_id=dataset_id)
    tasks = {AUDIT_TASK_OF[t] for t in (judge_tasks or AUDIT_TASK_OF) if t in AUDIT_TASK_OF}
    for task in sorted(tasks):
        frame_strata_request(dataset_id=dataset_id, task=task)
    for audit_set in AuditSet.objects.filter(
        dataset_id=dataset_id, status=JobStatus.SUCCEEDED, task__in=tasks
    ).only("pk", "dataset_id", "task"):
        audit_statistics_request(audit_set=audit_set)


def _compute(row: AuditComputation) -> dict[str, Any]:
    # Notes are stored in English and translated when shown, in the reader's language.
    with translation.override("en"):
        if row.kind == ComputationKind.AUDIT_STATISTICS:
            audit_set = AuditSet.objects.get(pk=int(row.audit_set_id or 0))
            return statistics.audit_statistics(audit_set=audit_set)
        return frame_strata(dataset=Dataset.objects.get(pk=row.dataset_id), task=row.task)


def frame_strata(*, dataset: Dataset, task: str) -> dict[str, Any]:
    """The sampling frame summed by stratum: {stratum: [size, rare, disagree]} and totals."""
    strata: dict[str, list[int]] = {}
    for row in selectors.audit_frame(dataset=dataset, task=task):
        counts = strata.setdefault(row.item.stratum, [0, 0, 0])
        counts[0] += 1
        counts[1] += int(row.item.rare)
        counts[2] += int(row.item.disagree)
    return {
        "strata": strata,
        "frame_size": sum(c[0] for c in strata.values()),
        "rare": sum(c[1] for c in strata.values()),
        "disagree": sum(c[2] for c in strata.values()),
    }


def computation_run(*, computation_id: int) -> AuditComputation | None:
    """Compute a queued row and store its result (safe to run twice: a row computed or being
    computed by a live worker is left alone). A request that came in while it ran queues the
    next run."""
    computed: list[bool] = []

    def compute(row: AuditComputation) -> dict[str, Any]:
        result = _compute(row)
        computed.append(True)
        return result

    row = computations.computation_run(
        AuditComputation,
        computation_id,
        compute=compute,
        send=lambda pk: _send(pk),
    )
    if (
        computed
        and row is not None
        and row.kind == ComputationKind.AUDIT_STATISTICS
        and row.status == JobStatus.SUCCEEDED
        and row.computed_at is not None
    ):
        webhook_event_emit(
            event=WebhookEvent.AUDIT_STATISTICS_COMPUTED,
            dataset=row.dataset_id,
            data={
                "audit_set": {"id": row.audit_set_id, "task": row.task},
                "computed_at": row.computed_at.isoformat(),
                "seconds": row.seconds,
            },
        )
    return row


def audit_statistics_compute(*, audit_set: AuditSet) -> AuditComputation | None:
    """Request and compute an audit's figures at once, in this process (scripts and tests)."""
    pk = _request(
        ComputationKind.AUDIT_STATISTICS,
        dataset_id=audit_set.dataset_id,
        task=audit_set.task,
        audit_set_id=audit_set.pk,
        send=False,
    )
    return computation_run(computation_id=pk)


def frame_strata_compute(*, dataset: Dataset, task: str) -> AuditComputation | None:
    """Request and count a frame's strata at once, in this process (scripts and tests)."""
    pk = _request(ComputationKind.FRAME_STRATA, dataset_id=dataset.pk, task=task, send=False)
    return computation_run(computation_id=pk)


def computations_sweep() -> SweepResult:
    """Run again the computations whose worker died; send those whose message was lost."""
    return jobs.job_sweep(AuditComputation, send=lambda pk: enqueue(TASK_NAME, pk))


def audit_statistics_stored(*, audit_set: AuditSet) -> AuditComputation | None:
    """The stored statistics row of an audit set (None before its first request)."""
    return AuditComputation.objects.filter(
        kind=ComputationKind.AUDIT_STATISTICS, audit_set=audit_set
    ).first()


def frame_strata_stored(*, dataset: Dataset, task: str) -> AuditComputation | None:
    return AuditComputation.objects.filter(
        kind=ComputationKind.FRAME_STRATA, dataset=dataset, task=task
    ).first()


def audit_statistics_ensure(*, audit_set: AuditSet) -> AuditComputation | None:
    """The stored row; when there is none yet (an audit drawn before figures were stored),
    one is requested so that the page can show it soon. Never computes in the caller."""
    row = audit_statistics_stored(audit_set=audit_set)
    if row is None and audit_set.status == JobStatus.SUCCEEDED:
        _request(
            ComputationKind.AUDIT_STATISTICS,
            dataset_id=audit_set.dataset_id,
            task=audit_set.task,
            audit_set_id=audit_set.pk,
        )
        row = audit_statistics_stored(audit_set=audit_set)
    return row


def frame_strata_ensure(*, dataset: Dataset, task: str) -> AuditComputation | None:
    """The stored strata of a frame; requested when never counted (never computed here)."""
    row = frame_strata_stored(dataset=dataset, task=task)
    if row is None:
        _request(ComputationKind.FRAME_STRATA, dataset_id=dataset.pk, task=task)
        row = frame_strata_stored(dataset=dataset, task=task)
    return row


def _stored(row: AuditComputation | None) -> Stored:
    return stored_state(row)


def audit_statistics_read(*, audit_set: AuditSet) -> Stored:
    """The audit's stored figures, their notes in the reader's language."""
    stored = _stored(audit_statistics_ensure(audit_set=audit_set))
    if stored.result is not None:
        notes = [gettext(note) for note in stored.result.get("notes", [])]
        stored = replace(stored, result={**stored.result, "notes": notes})
    return stored


def frame_strata_read(*, dataset: Dataset, task: str) -> Stored:
    return _stored(frame_strata_ensure(dataset=dataset, task=task))


def leaderboard_corrections(
    *, dataset: Dataset
) -> tuple[AuditSet | None, dict[str, Any], Stored | None]:
    """The latest rated scoring or safety audit of a dataset, its stored PPI-corrected score
    per model (for the leaderboard to show beside the judges' own scores), and the state of
    its computation."""
    audit_set = (
        AuditSet.objects.filter(dataset=dataset, task__in=[AuditTask.SCORING, AuditTask.SAFETY])
        .filter(ratings__isnull=False)
        .order_by("-created_at", "-pk")
        .first()
    )
    if audit_set is None:
        return None, {}, None
    stored = _stored(audit_statistics_ensure(audit_set=audit_set))
    corrected = (stored.result or {}).get("corrected", [])
    return audit_set, {score["model"]: score for score in corrected}, stored
