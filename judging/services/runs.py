"""Running a judge job's chunk or lane: claimed like every job (``core.jobs``), retried with
a growing delay after a failure, given up with the reason after JOB_MAX_ATTEMPTS attempts."""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils import timezone

from core.jobs import (
    Claim,
    JobStopped,
    gave_up_message,
    job_claim,
    job_finish,
    job_heartbeat,
    job_release,
    job_send_queued,
)
from core.tasks import enqueue
from judging.models import CHUNK_FINISHED, ChunkStatus, JudgeJobChunk
from judging.services.chunks import SharedStoreUnavailable, judge_chunk_items
from judging.services.jobs import judge_job_finish_if_done
from judging.services.lanes import lane_run

logger = logging.getLogger(__name__)


def _retry_or_fail(claim: Claim, exc: BaseException) -> None:
    """Queue the chunk again after a growing delay, or give it up after its last attempt.
    Calls that could not reach the rate-limit store (Redis away) use up no attempt: the chunk
    keeps its verdicts and waits for Redis, however often it goes away."""
    reason = f"{type(exc).__name__}: {exc}"[:2000]
    store_away = isinstance(exc, SharedStoreUnavailable)
    if claim.attempt >= settings.JOB_MAX_ATTEMPTS and not store_away:
        job_finish(claim, status=ChunkStatus.FAILED, message=gave_up_message(claim.attempt, reason))
        return
    if job_release(claim, message=reason, attempt_used=not store_away):
        delay = min(60, 5 * 2 ** (claim.attempt - 1))
        job_send_queued(
            JudgeJobChunk,
            claim.pk,
            lambda: enqueue("judging.run_judge_chunk", claim.pk, countdown=delay),
        )


def judge_chunk_run(*, chunk_id: int) -> int:
    """Judge the items of one chunk that still lack a verdict; returns how many were judged."""
    claim = job_claim(JudgeJobChunk, chunk_id)
    if claim is None:
        return 0
    chunk = JudgeJobChunk.objects.select_related("job", "judge").get(pk=chunk_id)
    job = chunk.job
    if job.cancel_requested or job.is_finished:
        job_finish(claim, status=ChunkStatus.CANCELLED)
        judge_job_finish_if_done(job_id=job.pk)
        return 0
    JudgeJobChunk.objects.filter(pk=chunk.pk).update(started_at=timezone.now())
    try:
        with job_heartbeat(claim) as heartbeat:
            if chunk.judge is None:
                judged = lane_run(chunk, job, heartbeat)
            else:
                judged = judge_chunk_items(chunk, job, chunk.judge)
    except JobStopped:
        # Cancelled or taken over meanwhile: what was judged is kept, nothing more is written.
        judge_job_finish_if_done(job_id=job.pk)
        return 0
    except Exception as exc:
        logger.warning("chunk %s failed (attempt %s)", chunk_id, claim.attempt, exc_info=True)
        _retry_or_fail(claim, exc)
        judged = 0
    else:
        job_finish(claim, status=ChunkStatus.DONE)
    judge_job_finish_if_done(job_id=job.pk)
    return judged


def judge_chunk_fail(*, chunk_id: int, message: str) -> None:
    """Record a chunk whose task gave up, so the job can still end (as failed)."""
    chunk = JudgeJobChunk.objects.filter(pk=chunk_id).first()
    if chunk is None:
        return
    JudgeJobChunk.objects.filter(pk=chunk_id).exclude(status__in=CHUNK_FINISHED).update(
        status=ChunkStatus.FAILED, message=message[:2000], finished_at=timezone.now()
    )
    judge_job_finish_if_done(job_id=chunk.job_id)
