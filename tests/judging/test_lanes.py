"""Tests for judging.services.lanes: lanes planned over a job's items, their shares of each
judge's concurrency, and a cancel that stops a lane between two saves."""

from __future__ import annotations

from typing import Any

import pytest

from core.jobs import Heartbeat
from judging import services
from judging.models import ChunkStatus, JudgeJob, JudgeJobChunk, JudgeJobStatus, Verdict
from judging.services.lanes import lane_slots
from tests.annotation.factories import mmooc_dataset
from tests.judging.factories import bulk_responses, bulk_samples, fake_judge, rule_judge

pytestmark = pytest.mark.django_db


def test_the_lanes_shares_of_a_judge_add_up_to_its_cap(settings: Any) -> None:
    """Three lanes share 32 slots as 11 + 11 + 10; a fourth lane (a larger job) takes the
    first lane's share; a judge with fewer slots than lanes still gets one a lane."""
    settings.JUDGE_JOB_LANES = 3
    assert [lane_slots(32, i) for i in range(4)] == [11, 11, 10, 11]
    assert [lane_slots(2, i) for i in range(3)] == [1, 1, 1]


def test_endpoint_judges_run_in_lanes_and_the_rule_judge_in_batches(
    settings: Any, django_capture_on_commit_callbacks: Any, fake_openai: Any
) -> None:
    """Ten items, two lanes of at most three items: four lanes (no judge) cover every item
    once; the rule judge keeps a chunk of its own."""
    settings.JUDGE_JOB_LANES = 2
    settings.JUDGE_LANE_ITEMS = 3
    dataset = mmooc_dataset()
    responses = bulk_responses(bulk_samples(dataset, 10), ["m"])
    with fake_openai() as server:  # the plan checks the endpoint judge first
        with django_capture_on_commit_callbacks(execute=False):
            job = services.judge_job_start(
                dataset=dataset,
                task="scoring",
                judges=[fake_judge(server.base_url), rule_judge()],
            )
        with django_capture_on_commit_callbacks(execute=False):
            services.judge_job_plan(job_id=job.pk)
    lanes = JudgeJobChunk.objects.filter(job=job, judge__isnull=True).order_by("index")
    assert [len(lane.item_ids) for lane in lanes] == [3, 3, 3, 1]
    assert sorted(i for lane in lanes for i in lane.item_ids) == sorted(r.pk for r in responses)
    (rule_chunk,) = JudgeJobChunk.objects.filter(job=job, judge__isnull=False)
    assert len(rule_chunk.item_ids) == 10


def test_a_cancel_stops_a_lane_at_its_next_save_keeping_what_was_judged(
    settings: Any,
    django_capture_on_commit_callbacks: Any,
    fake_openai: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The lane's first save is followed by a cancel: its next beat stops it, no call is
    made after, the verdicts already saved are kept and the job reads cancelled."""
    settings.JUDGE_JOB_LANES = 1
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 30), ["m"])
    beat = Heartbeat.beat

    def cancel_then_beat(self: Heartbeat, **fields: Any) -> None:
        job = JudgeJob.objects.get(chunks__pk=self.claim.pk)
        if Verdict.objects.filter(job=job).exists() and not job.cancel_requested:
            services.judge_job_cancel(job=job)
        beat(self, **fields)

    monkeypatch.setattr(Heartbeat, "beat", cancel_then_beat)
    with fake_openai(latency=0.1) as server:
        with django_capture_on_commit_callbacks(execute=False):
            job = services.judge_job_start(
                dataset=dataset,
                task="scoring",
                judges=[fake_judge(server.base_url, max_concurrency=2)],
            )
        with django_capture_on_commit_callbacks(execute=False):
            services.judge_job_plan(job_id=job.pk)
        lane = JudgeJobChunk.objects.get(job=job)
        assert services.judge_chunk_run(chunk_id=lane.pk) == 0
        requests = len(server.chat_records())
    job.refresh_from_db()
    lane.refresh_from_db()
    assert job.status == JudgeJobStatus.CANCELLED and lane.status == ChunkStatus.CANCELLED
    saved = Verdict.objects.filter(job=job).count()
    assert 0 < saved <= requests < 30
