"""Judge jobs under faults and a killed worker: no verdict lost, none duplicated.

Real worker processes on Redis share the test's PostgreSQL database; the judge is the fake
OpenAI server with injected faults, and short timeouts and backoffs keep the tests bounded.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest
from django.db.models import Count

from annotation.models import JobStatus
from judging import services
from judging.models import JudgeJob, JudgeJobStatus, ModelResponse, Verdict
from judging.services.items import scoring_messages
from tests.annotation.factories import mmooc_dataset
from tests.conftest import worker_on
from tests.judging.factories import bulk_responses, bulk_samples, fake_judge
from tests.support.fake_openai import hash_prompt
from tests.support.processes import kill_worker, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def _finished(job: JudgeJob) -> bool:
    job.refresh_from_db()
    return job.is_finished


def _assert_one_verdict_per_response(judge: Any, responses: list[ModelResponse]) -> None:
    per_response = Counter(
        dict(
            Verdict.objects.filter(judge=judge)
            .values_list("response_id")
            .annotate(n=Count("id"))
            .values_list("response_id", "n")
        )
    )
    assert set(per_response) == {r.pk for r in responses}, "a response has no verdict"
    assert set(per_response.values()) == {1}, "a response has two verdicts"


def test_a_2000_item_job_under_faults_ends_with_one_verdict_or_error_per_item(
    transactional_db: None, fake_openai: Any
) -> None:
    """20% 5xx, 10% 429, 5% hangs, 5% malformed: every item ends with exactly one row, a
    verdict or an explicit error, and each verdict matches exactly one clean reply."""
    dataset = mmooc_dataset()
    responses = bulk_responses(bulk_samples(dataset, 400), ["m1", "m2", "m3", "m4", "m5"])
    assert len(responses) == 2000
    faults = {"error_500": 0.2, "rate_limit": 0.1, "hang": 0.05, "malformed": 0.05}
    with (
        fake_openai(latency=0.005, fault_rates=faults, seed=7, hang_s=3) as server,
        worker_on(os.environ["REDIS_URL"]),  # after the server: it allows the server's port
    ):
        judge = fake_judge(
            server.base_url, max_concurrency=32, timeout_s=0.5, max_attempts=5, temperature=0
        )
        job = services.judge_job_start(dataset=dataset, task="scoring", judges=[judge])
        wait_until(lambda: _finished(job), timeout=240, what="the faulty job to finish")
        records = server.chat_records()
    _assert_one_verdict_per_response(judge, responses)
    clean = Counter(r.prompt_hash for r in records if r.status == 200 and r.fault is None)
    verdicts = Verdict.objects.filter(judge=judge).select_related("response__sample")
    errors = 0
    for verdict in verdicts:
        assert verdict.response is not None
        digest = hash_prompt({"messages": scoring_messages(judge, job.task, verdict.response)})
        if verdict.error_kind:
            errors += 1
            assert verdict.error and verdict.attempts >= 1
            assert clean[digest] == 0, "an item with a clean reply was recorded as an error"
        else:
            assert clean[digest] == 1, "a verdict without exactly one clean reply"
    assert {r.fault for r in records} >= set(faults)
    assert errors < 100  # with five attempts, about 1% of items exhaust them
    assert job.status == (JudgeJobStatus.WITH_ERRORS if errors else JobStatus.SUCCEEDED)


def test_killing_a_worker_mid_job_loses_and_duplicates_nothing(
    transactional_db: None, fake_openai: Any
) -> None:
    """SIGKILL the worker (and its pool) while chunks are in flight, start another: the job
    completes with exactly one verdict per item."""
    dataset = mmooc_dataset()
    responses = bulk_responses(bulk_samples(dataset, 120), ["m1", "m2", "m3"])
    # Redis redelivers the dead worker's messages within seconds, and the sweep (beat, with
    # short heartbeats here) takes over chunks whose heartbeat stopped; either may come first.
    quick_redelivery = {
        "CELERY_VISIBILITY_TIMEOUT": "3",
        "CELERY_UNACKED_RESTORE_INTERVAL": "1",
        "CELERY_UNACKED_RESTORE_THROTTLE": "1",
        "JOB_HEARTBEAT_SECONDS": "1",
        "JOB_STALE_SECONDS": "5",
        "JOB_SWEEP_SECONDS": "1",
    }
    with fake_openai(latency=0.25, seed=3) as server:
        judge = fake_judge(server.base_url, max_concurrency=8, timeout_s=5)
        broker = os.environ["REDIS_URL"]
        with worker_on(broker, quick_redelivery, beat=True) as worker:
            job = services.judge_job_start(dataset=dataset, task="scoring", judges=[judge])
            wait_until(
                lambda: Verdict.objects.filter(job=job).count() >= 40,
                timeout=60,
                what="the first chunks' verdicts",
            )
            kill_worker(worker)
        made_before = Verdict.objects.filter(job=job).count()
        assert made_before < len(responses), "the job finished before the kill"
        with worker_on(broker, quick_redelivery, beat=True):
            wait_until(lambda: _finished(job), timeout=120, what="the job after the kill")
        successes = server.success_counts()
    assert job.status == JobStatus.SUCCEEDED
    _assert_one_verdict_per_response(judge, responses)
    assert not Verdict.objects.filter(job=job).exclude(error_kind="").exists()
    assert sum(successes.values()) >= len(responses)
    assert Verdict.objects.filter(job=job).count() > made_before
