"""The leaderboard's kept aggregates: requesting their recomputation, running it in a worker,
sweeping for lost or stale ones, and the state pages show.

The aggregates (``judging.models.leaderboard``) are recomputed by one statement
(``judging.leaderboard_statements.RECOMPUTE``) in a worker: after a judge job or an import of
responses or verdicts ends (``leaderboard_request_on_commit``, a few seconds later so that a
burst costs one run), and whenever the triggers of migration 0009 have marked a change (a
verdict written, a sample rejected, taken down, restored or given another group or stratum)
that is older than ``LEADERBOARD_REFRESH_SECONDS``: the periodic sweep requests those, and so
does a page that finds them. The run is a stored computation (``core.computations``): claimed,
beating, run again by the sweep when its worker died, its message sent again when the broker
lost it; the marks stay in the database until a run has counted them, so nothing a killed
worker or a restarted broker loses leaves the figures stale for good.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.postgres.expressions import ArraySubquery
from django.db import connection, transaction
from django.db.models import Exists, Min, OuterRef, Subquery
from django.db.models.functions import JSONObject
from django.utils import timezone

from annotation.models import Dataset, DatasetKind, SampleStatus
from core import computations, jobs
from core.jobs import ACTIVE, JobStatus, SweepResult
from core.tasks import enqueue
from judging.leaderboard import UNGROUPED
from judging.leaderboard_statements import RECOMPUTE
from judging.models import (
    JudgeTask,
    LeaderboardChange,
    LeaderboardComputation,
    LeaderboardVersion,
)

TASK_NAME = "judging.compute_leaderboard"
COMPUTE_DELAY_SECONDS = 5.0
# The statuses of samples whose responses no score counts (defect 9 of issue 25).
LEFT_OUT_STATUSES = (SampleStatus.REJECTED, SampleStatus.REMOVED)
# Serialises two runs over one dataset (a worker taken over while its statement still runs):
# each deletes what the other inserted only once that one has committed.
_LOCK_CLASS = 30_301
# The recomputation's memory for its aggregates, per sort or hash (in its transaction only).
WORK_MEM = "256MB"


def leaderboard_task(dataset: Dataset) -> str:
    """The verdict task a dataset's leaderboard counts."""
    if dataset.kind == DatasetKind.TRIMODAL:
        return JudgeTask.MCBENCH_SAFETY
    return JudgeTask.MMOOC_SCORING


def leaderboard_request(*, dataset_id: int, send: bool = True) -> int:
    """Mark the dataset's leaderboard as changed; queue its recomputation unless one is
    already queued (a running one is followed by another). Returns the row's id."""
    return computations.computation_request(
        LeaderboardComputation,
        scope={"dataset_id": dataset_id},
        send=_send if send else None,
    )


def leaderboard_request_on_commit(*, dataset_id: int) -> None:
    """The verdicts or responses of a dataset changed: recompute its leaderboard on commit."""
    transaction.on_commit(lambda: leaderboard_request(dataset_id=dataset_id))


def _send(pk: int) -> None:
    jobs.job_enqueue(
        LeaderboardComputation,
        pk,
        lambda: enqueue(TASK_NAME, pk, countdown=COMPUTE_DELAY_SECONDS),
    )


def _recompute(row: LeaderboardComputation) -> dict[str, Any]:
    dataset = Dataset.objects.get(pk=row.dataset_id)
    task = leaderboard_task(dataset)
    params: dict[str, bool | int | str | list[str]] = {
        "dataset": dataset.pk,
        "task": str(task),
        "safety": task == JudgeTask.MCBENCH_SAFETY,
        "left_out": [str(status) for status in LEFT_OUT_STATUSES],
        "ungrouped": UNGROUPED,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s::int4, %s::int4)", [_LOCK_CLASS, dataset.pk]
        )
        cursor.execute("SELECT set_config(%s, %s, true)", ["work_mem", WORK_MEM])
        cursor.execute(RECOMPUTE, params)
        cells = cursor.rowcount
    return {"task": task, "cells": cells}


def leaderboard_compute_run(*, computation_id: int) -> LeaderboardComputation | None:
    """Recompute a queued row's aggregates (safe to run twice: a row computed or being
    computed by a live worker is left alone)."""
    return computations.computation_run(
        LeaderboardComputation, computation_id, compute=_recompute, send=_send
    )


def leaderboard_compute(*, dataset: Dataset) -> LeaderboardComputation | None:
    """Request and recompute a dataset's aggregates at once, in this process (scripts, the
    bench and tests)."""
    pk = leaderboard_request(dataset_id=dataset.pk, send=False)
    return leaderboard_compute_run(computation_id=pk)


@dataclass(frozen=True)
class LeaderboardState:
    """When the figures a page shows were computed, whether a newer computation is on its way,
    since when changes wait to be counted, and why the last computation failed."""

    computed_at: datetime | None
    computing: bool
    pending_since: datetime | None
    failed: str
    # Every prompt version the counted verdicts were made with (None: all of them), and the
    # scored responses on rejected or taken-down samples each leaves out.
    left_out: dict[str | None, int] = field(default_factory=dict)


def _row(dataset_id: int) -> LeaderboardComputation | None:
    oldest = (
        LeaderboardChange.objects.filter(dataset_id=OuterRef("dataset_id"))
        .order_by()
        .values("dataset_id")
        .annotate(oldest=Min("since"))
        .values("oldest")
    )
    versions = LeaderboardVersion.objects.filter(dataset_id=OuterRef("dataset_id")).values(
        pair=JSONObject(version="prompt_version", n="left_out_responses")
    )
    return (
        LeaderboardComputation.objects.filter(dataset_id=dataset_id)
        .annotate(pending_since=Subquery(oldest), versions=ArraySubquery(versions))
        .first()
    )


def _refresh_limit() -> datetime:
    return timezone.now() - timedelta(seconds=settings.LEADERBOARD_REFRESH_SECONDS)


def leaderboard_ensure(*, dataset_id: int) -> LeaderboardState:
    """The state of a dataset's aggregates, requesting their recomputation when there are
    none yet or when changes have waited longer than ``LEADERBOARD_REFRESH_SECONDS`` with no
    run on its way (never computes in the caller, except with eager tasks). One query when
    nothing needs requesting (the prompt versions with it)."""
    row = _row(dataset_id)
    pending = getattr(row, "pending_since", None)
    if row is None or (
        pending is not None and row.status not in ACTIVE and pending <= _refresh_limit()
    ):
        leaderboard_request(dataset_id=dataset_id)
        row = _row(dataset_id)
    if row is None:  # the dataset went away meanwhile
        return LeaderboardState(None, False, None, "")
    return LeaderboardState(
        computed_at=row.computed_at,
        computing=row.status in ACTIVE,
        pending_since=getattr(row, "pending_since", None),
        failed=row.message if row.status == JobStatus.FAILED else "",
        left_out={pair["version"]: pair["n"] for pair in getattr(row, "versions", [])},
    )


def leaderboard_sweep() -> SweepResult:
    """Run again the recomputations whose worker died, send those whose message was lost, and
    request those of datasets whose changes have waited longer than the refresh interval."""
    result = jobs.job_sweep(LeaderboardComputation, send=lambda pk: enqueue(TASK_NAME, pk))
    active = LeaderboardComputation.objects.filter(
        dataset_id=OuterRef("dataset_id"), status__in=ACTIVE
    )
    stale = set(
        LeaderboardChange.objects.filter(since__lte=_refresh_limit())
        .exclude(Exists(active))
        .values_list("dataset_id", flat=True)
        .distinct()
    )
    present = set(Dataset.objects.filter(pk__in=stale).values_list("pk", flat=True))
    if stale - present:  # marked while the dataset was being deleted
        LeaderboardChange.objects.filter(dataset_id__in=stale - present).delete()
    for dataset_id in sorted(present):
        result.requeued.append(leaderboard_request(dataset_id=dataset_id))
    return result
