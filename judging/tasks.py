"""Background work of judge jobs: thin tasks that take ids and call one service each.

All are safe to run twice: the rows they work on are claimed (``core.jobs``), so a
redelivered message never runs work that another worker is doing.
"""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from annotation.imports.jobs import import_job_in_its_language
from core.tasks import RETRY_ON_DATABASE_ERROR
from judging import leaderboard_store, services
from judging.audit import computations
from judging.audit import services as audit_services
from judging.imports import services as import_services
from judging.services import checks as check_services


class _ChunkTask(Task):  # type: ignore[type-arg]
    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        """A chunk whose retries ran out is recorded as failed, so the job can end."""
        chunk_id = args[0] if args else kwargs.get("chunk_id")
        services.judge_chunk_fail(chunk_id=chunk_id, message=f"{type(exc).__name__}: {exc}")


@shared_task(
    name="judging.plan_judge_job",
    **RETRY_ON_DATABASE_ERROR,
    soft_time_limit=300,
    time_limit=360,
)
def plan_judge_job(job_id: int) -> None:
    """Split a job into chunks and queue the chunks not yet done."""
    services.judge_job_plan(job_id=job_id)


@shared_task(
    base=_ChunkTask,
    name="judging.run_judge_chunk",
    # The chunk's own failures are retried by the service (its row counts the attempts);
    # only a database that cannot even be asked is retried here.
    **RETRY_ON_DATABASE_ERROR,
    retry_backoff_max=60,
    soft_time_limit=1800,
    time_limit=1900,
)
def run_judge_chunk(chunk_id: int) -> None:
    """Judge one chunk's missing items (a delivery while another worker runs it does nothing)."""
    services.judge_chunk_run(chunk_id=chunk_id)


@shared_task(
    name="judging.draw_audit_set",
    **RETRY_ON_DATABASE_ERROR,
)
def draw_audit_set(audit_set_id: int) -> None:
    """Read the frame of a queued audit set and store its drawn items (idempotent)."""
    audit_services.audit_set_draw_run(audit_set_id=audit_set_id)


@shared_task(
    name="judging.compute_audit_figures",
    **RETRY_ON_DATABASE_ERROR,
    soft_time_limit=1800,
    time_limit=1900,
)
def compute_audit_figures(computation_id: int) -> None:
    """Compute an audit's statistics or a frame's strata and store them (idempotent)."""
    computations.computation_run(computation_id=computation_id)


@shared_task(
    name="judging.compute_leaderboard",
    **RETRY_ON_DATABASE_ERROR,
    soft_time_limit=1800,
    time_limit=1900,
)
def compute_leaderboard(computation_id: int) -> None:
    """Recompute a dataset's leaderboard aggregates (idempotent)."""
    leaderboard_store.leaderboard_compute_run(computation_id=computation_id)


@shared_task(name="judging.run_import_job", acks_late=True, soft_time_limit=50 * 60)
def run_import_job(job_id: int) -> None:
    """Run (or resume) one import of responses or verdicts (annotation's sweep resumes it)."""
    import_job_in_its_language(
        job_id, lambda: import_services.judging_import_job_run(job_id=job_id)
    )


@shared_task(name="judging.check_judge", acks_late=True, soft_time_limit=120)
def check_judge(check_id: int) -> None:
    """Make a judge's test call and record its latency and reply, or its error."""
    check_services.judge_check_run(check_id=check_id)


@shared_task(name="judging.sweep_jobs", acks_late=True, soft_time_limit=120)
def sweep_jobs() -> None:
    """Run by Celery beat: recover judge jobs, audit draws, audit computations and leaderboard
    recomputations whose worker or message was lost, and request the leaderboards whose
    changes wait to be counted."""
    services.judge_jobs_sweep()
    audit_services.audit_sets_sweep()
    computations.computations_sweep()
    leaderboard_store.leaderboard_sweep()
    check_services.judge_checks_sweep()
