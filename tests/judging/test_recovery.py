"""Judge jobs that always end (judging.services.recovery and chunks): cancel at once, retry,
chunks given up with their reason, Redis failures retried rather than recorded, the sweep."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import JobStatus
from judging import services, tasks
from judging.models import ChunkStatus, JudgeJob, JudgeJobChunk, Verdict
from judging.services import chunks
from tests.annotation.factories import mmooc_dataset
from tests.conftest import client_for
from tests.judging.factories import bulk_responses, bulk_samples, rule_judge

pytestmark = pytest.mark.django_db


def planned_job(callbacks_fixture: Any, n: int = 20) -> JudgeJob:
    """A scoring job by the rule judge, planned into chunks that no worker has run yet."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, n), ["m"])
    with callbacks_fixture(execute=False):
        job = services.judge_job_start(dataset=dataset, task="scoring", judges=[rule_judge()])
        services.judge_job_plan(job_id=job.pk)
    job.refresh_from_db()
    return job


def redis_down_for(item_ids: set[int]) -> Any:
    """Outcomes as the runner gives them when the rate-limit store is gone for some items."""
    real = chunks._outcomes

    def outcomes(job: Any, judge: Any, todo: list[Any], items: Any) -> list[dict[str, Any]]:
        fields = real(job, judge, todo, items)
        return [
            {
                "error_kind": "unexpected",
                "error": "ConnectionError: Error 111 connecting to 127.0.0.1:6379. (attempts: x)",
                "attempts": 1,
            }
            if t.item_id in item_ids
            else f
            for t, f in zip(todo, fields, strict=True)
        ]

    return outcomes


def test_a_cancel_ends_a_running_job_at_once(django_capture_on_commit_callbacks: Any) -> None:
    """Even with a chunk running and others queued (and no worker or broker to hear it), the
    job reads cancelled at once; a chunk delivered later makes no verdict."""
    job = planned_job(django_capture_on_commit_callbacks)
    first = JudgeJobChunk.objects.filter(job=job).first()
    assert first is not None
    JudgeJobChunk.objects.filter(pk=first.pk).update(
        status=ChunkStatus.RUNNING, heartbeat_at=timezone.now()
    )
    services.judge_job_cancel(job=job)
    assert job.status == JobStatus.CANCELLED
    assert set(JudgeJobChunk.objects.filter(job=job).values_list("status", flat=True)) == {
        ChunkStatus.CANCELLED
    }
    assert services.judge_chunk_run(chunk_id=first.pk) == 0
    assert not Verdict.objects.filter(job=job).exists()


def test_redis_failures_are_retried_not_recorded_and_use_up_no_attempt(
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """Items whose calls could not reach Redis get no verdict; the chunk is queued again (its
    other verdicts kept), as often as Redis goes away, without using up its attempts (Redis,
    not the chunk, was the problem); once Redis answers the chunk ends with every verdict."""
    job = planned_job(django_capture_on_commit_callbacks, n=5)
    chunk = JudgeJobChunk.objects.get(job=job)
    unlucky = set(chunk.item_ids[:2])
    real = chunks._outcomes
    monkeypatch.setattr(chunks, "_outcomes", redis_down_for(unlucky))
    sent: list[Any] = []
    monkeypatch.setattr(tasks.run_judge_chunk, "apply_async", lambda *a, **k: sent.append(a))

    for _outage in range(settings.JOB_MAX_ATTEMPTS + 2):
        assert services.judge_chunk_run(chunk_id=chunk.pk) == 0
        chunk.refresh_from_db()
        assert (chunk.status, chunk.attempts) == (ChunkStatus.QUEUED, 0)
        assert "rate-limit store" in chunk.message
    assert sent == [((chunk.pk,),)] * (settings.JOB_MAX_ATTEMPTS + 2)
    assert Verdict.objects.filter(job=job).count() == 3
    assert not Verdict.objects.filter(job=job).exclude(error_kind="").exists()
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING

    monkeypatch.setattr(chunks, "_outcomes", real)

    services.judge_chunk_run(chunk_id=chunk.pk)
    chunk.refresh_from_db()
    job.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.DONE, 1)
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert Verdict.objects.filter(job=job).count() == 5


def test_a_chunk_failing_each_attempt_is_given_up_with_its_reason(
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """Any other failure uses up an attempt; after JOB_MAX_ATTEMPTS the chunk fails, and so
    does the job, with the reason; a Retry runs what is missing."""
    job = planned_job(django_capture_on_commit_callbacks, n=5)
    chunk = JudgeJobChunk.objects.get(job=job)

    def broken(*args: Any) -> Any:
        raise RuntimeError("the judge's answer could not be read")

    monkeypatch.setattr(chunks, "_outcomes", broken)
    monkeypatch.setattr(tasks.run_judge_chunk, "apply_async", lambda *a, **k: None)
    for _attempt in range(settings.JOB_MAX_ATTEMPTS):
        services.judge_chunk_run(chunk_id=chunk.pk)
    chunk.refresh_from_db()
    job.refresh_from_db()
    assert chunk.status == ChunkStatus.FAILED and "could not be read" in chunk.message
    assert job.status == JobStatus.FAILED and "could not be read" in job.message

    monkeypatch.undo()
    with django_capture_on_commit_callbacks(execute=True):
        services.judge_job_retry(job=job)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert Verdict.objects.filter(job=job).count() == 5


def test_the_sweep_takes_over_dead_chunks_and_ends_jobs_whose_chunks_all_ended(
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    job = planned_job(django_capture_on_commit_callbacks, n=10)
    dead = JudgeJobChunk.objects.get(job=job)  # the rule judge takes 500 items a chunk
    stale = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    JudgeJobChunk.objects.filter(pk=dead.pk).update(
        status=ChunkStatus.RUNNING, attempts=1, heartbeat_at=stale
    )
    sent: list[int] = []
    monkeypatch.setattr(tasks.run_judge_chunk, "delay", sent.append)
    assert services.judge_jobs_sweep().requeued == [dead.pk]
    assert sent == [dead.pk]
    assert JudgeJobChunk.objects.get(pk=dead.pk).status == ChunkStatus.QUEUED

    JudgeJobChunk.objects.filter(pk=dead.pk).update(status=ChunkStatus.DONE)
    assert JudgeJob.objects.get(pk=job.pk).status == JobStatus.RUNNING
    services.judge_jobs_sweep()
    assert JudgeJob.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED


def test_a_redelivered_chunk_of_a_live_worker_is_skipped_and_a_dead_ones_taken_over(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    job = planned_job(django_capture_on_commit_callbacks, n=5)
    chunk = JudgeJobChunk.objects.get(job=job)
    JudgeJobChunk.objects.filter(pk=chunk.pk).update(
        status=ChunkStatus.RUNNING, attempts=1, heartbeat_at=timezone.now()
    )
    assert services.judge_chunk_run(chunk_id=chunk.pk) == 0
    assert not Verdict.objects.filter(job=job).exists()
    stale = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    JudgeJobChunk.objects.filter(pk=chunk.pk).update(heartbeat_at=stale)
    assert services.judge_chunk_run(chunk_id=chunk.pk) == 5
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.DONE, 2)


def test_only_leads_retry_and_only_ended_jobs(
    django_capture_on_commit_callbacks: Any, lead: Any, annotator: Any
) -> None:
    job = planned_job(django_capture_on_commit_callbacks)
    url = reverse("api_judge_job_retry", args=[job.pk])
    assert client_for(annotator).post(url).status_code in (403, 404)
    assert client_for(lead).post(url).status_code == 409
    services.judge_job_cancel(job=job)
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(lead).post(url)
    assert response.status_code == 200
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and not job.cancel_requested
    assert Verdict.objects.filter(job=job).count() == 20
