"""Judge jobs that end whatever happens: cancel, retry, and the sweep that recovers them.

A cancel ends the job at once, even while no worker or broker is there to hear it: its
chunks not yet finished are cancelled in the database, and a worker still judging one stops
recording progress for it (the verdicts it completes are kept). The sweep, run by Celery
beat, sends again the planning of queued jobs whose message was lost, takes over chunks whose
worker died (or gives them up after JOB_MAX_ATTEMPTS attempts), sends again chunks whose
message was lost, and ends jobs whose chunks have all ended.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import JobStatus
from core.jobs import SweepResult, job_retry_fields, job_sweep, job_sweep_lost
from core.tasks import enqueue
from judging.models import (
    CHUNK_FINISHED,
    JUDGE_JOB_RETRYABLE,
    ChunkStatus,
    JudgeJob,
    JudgeJobChunk,
    Verdict,
)
from judging.services.jobs import enqueue_plan, judge_job_end, judge_job_finish_if_done


def judge_job_cancel(*, job: JudgeJob) -> JudgeJob:
    """End the job now: its unfinished chunks are cancelled and it reads "cancelled"."""
    with transaction.atomic():
        locked = JudgeJob.objects.select_for_update().get(pk=job.pk)
        if locked.is_finished:
            raise ValidationError(_("The job has already finished."), code="finished")
        locked.cancel_requested = True
        locked.save(update_fields=["cancel_requested"])
        locked.chunks.exclude(status__in=CHUNK_FINISHED).update(
            status=ChunkStatus.CANCELLED, finished_at=timezone.now()
        )
        judge_job_end(job=locked)
    job.refresh_from_db()
    return job


def judge_job_retry(*, job: JudgeJob) -> JudgeJob:
    """Run a job that failed, was cancelled or finished with errors again: only the verdicts
    still missing, and the calls that failed, are made."""
    with transaction.atomic():
        locked = JudgeJob.objects.select_for_update().get(pk=job.pk)
        if locked.status not in JUDGE_JOB_RETRYABLE:
            raise ValidationError(
                _("Only a job that failed, was cancelled or finished with errors can be retried."),
                code="not_retryable",
            )
        # Its failed calls count as another job's, so they are made again (and replaced).
        Verdict.objects.filter(job=locked).exclude(error_kind="").update(job=None)
        locked.chunks.update(**job_retry_fields(), started_at=None, finished_at=None)
        planned = locked.chunks.exists()
        JudgeJob.objects.filter(pk=locked.pk).update(
            **{
                **job_retry_fields(),
                # A planned job runs again at once; one never planned is planned first.
                "status": JobStatus.RUNNING if planned else JobStatus.QUEUED,
                "cancel_requested": False,
                "finished_at": None,
            }
        )
        transaction.on_commit(lambda: enqueue_plan(locked.pk))
    job.refresh_from_db()
    return job


def judge_jobs_sweep() -> SweepResult:
    """Recover judge jobs: lost planning messages, dead or lost chunks, jobs left unended."""
    result = job_sweep_lost(JudgeJob, send=lambda pk: enqueue("judging.plan_judge_job", pk))
    chunks = JudgeJobChunk.objects.filter(job__status=JobStatus.RUNNING)
    swept = job_sweep(
        JudgeJobChunk, send=lambda pk: enqueue("judging.run_judge_chunk", pk), queryset=chunks
    )
    result.requeued += swept.requeued
    result.failed += swept.failed
    result.resent += swept.resent
    unended = (
        JudgeJob.objects.filter(status=JobStatus.RUNNING)
        .exclude(chunks__status__in=(ChunkStatus.QUEUED, ChunkStatus.RUNNING))
        .values_list("pk", flat=True)
    )
    for job_id in unended:
        judge_job_finish_if_done(job_id=job_id)
    return result
