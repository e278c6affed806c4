"""Tests for core.jobs: claims fenced by attempts, heartbeats, the sweep and a broker that is
down. The import job stands in for every app's job model (they share these rules)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError

from annotation.models import ImportJob, JobStatus
from annotation.tasks import sweep_jobs
from core import jobs
from tests.annotation.factories import mmooc_dataset

pytestmark = pytest.mark.django_db


def queued_job(**fields: Any) -> ImportJob:
    return ImportJob.objects.create(
        dataset=mmooc_dataset(), source_kind="server_path", source="/x", format="mmooc", **fields
    )


def ago(seconds: float) -> Any:
    return timezone.now() - timedelta(seconds=seconds)


def test_a_claim_takes_a_queued_job_once_and_a_dead_one_again(settings: Any) -> None:
    """A queued job is claimed as attempt 1; while its heartbeat is fresh a second delivery
    gets nothing; once the heartbeat is older than JOB_STALE_SECONDS it is taken as attempt 2."""
    job = queued_job()
    first = jobs.job_claim(ImportJob, job.pk)
    assert first is not None and first.attempt == 1
    job.refresh_from_db()
    assert (job.status, job.attempts) == (JobStatus.RUNNING, 1)
    assert jobs.job_claim(ImportJob, job.pk) is None
    ImportJob.objects.filter(pk=job.pk).update(heartbeat_at=ago(settings.JOB_STALE_SECONDS + 1))
    second = jobs.job_claim(ImportJob, job.pk)
    assert second is not None and second.attempt == 2


def test_the_old_attempt_can_no_longer_write_once_taken_over() -> None:
    """Writes are fenced by the attempt: the first worker's beat and finish do nothing."""
    job = queued_job()
    first = jobs.job_claim(ImportJob, job.pk)
    assert first is not None
    ImportJob.objects.filter(pk=job.pk).update(heartbeat_at=ago(3600))
    second = jobs.job_claim(ImportJob, job.pk)
    assert second is not None
    with pytest.raises(jobs.JobStopped):
        jobs.Heartbeat(first, 10).beat()
    assert not jobs.job_finish(first, status=JobStatus.SUCCEEDED)
    assert jobs.job_finish(second, status=JobStatus.SUCCEEDED)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.finished_at is not None


def test_a_cancelled_job_stops_its_worker_at_the_next_beat() -> None:
    job = queued_job()
    claim = jobs.job_claim(ImportJob, job.pk)
    assert claim is not None
    ImportJob.objects.filter(pk=job.pk).update(status=JobStatus.CANCELLED)
    with pytest.raises(jobs.JobStopped):
        jobs.Heartbeat(claim, 10).beat(rows_done=5)
    job.refresh_from_db()
    assert (job.status, job.rows_done) == (JobStatus.CANCELLED, 0)


def test_a_claim_past_the_last_attempt_fails_the_job_with_the_reason(settings: Any) -> None:
    job = queued_job(attempts=settings.JOB_MAX_ATTEMPTS, message="Boom: the disk is full.")
    assert jobs.job_claim(ImportJob, job.pk) is None
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.finished_at is not None
    assert f"{settings.JOB_MAX_ATTEMPTS} attempts" in job.message
    assert "the disk is full" in job.message


def test_the_sweep_queues_dead_jobs_again_and_fails_them_after_the_last_attempt(
    settings: Any,
) -> None:
    """A running job whose heartbeat stopped is queued again and its task sent; at the last
    attempt it fails with the reason; a job with a fresh heartbeat is left alone."""
    stale = ago(settings.JOB_STALE_SECONDS + 5)
    dead = queued_job(status=JobStatus.RUNNING, attempts=1, heartbeat_at=stale)
    spent = queued_job(
        status=JobStatus.RUNNING, attempts=settings.JOB_MAX_ATTEMPTS, heartbeat_at=stale
    )
    alive = queued_job(status=JobStatus.RUNNING, attempts=1, heartbeat_at=timezone.now())
    sent: list[int] = []
    result = jobs.job_sweep_dead(ImportJob, send=sent.append)
    assert (result.requeued, result.failed, sent) == ([dead.pk], [spent.pk], [dead.pk])
    dead.refresh_from_db()
    spent.refresh_from_db()
    alive.refresh_from_db()
    assert dead.status == JobStatus.QUEUED and "queued again" in dead.message
    assert spent.status == JobStatus.FAILED and "Retry" in spent.message
    assert alive.status == JobStatus.RUNNING


def test_lost_messages_are_sent_again_when_the_broker_queue_is_empty(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job queued for longer than JOB_QUEUED_TIMEOUT_SECONDS is sent again when the queue
    is empty; while other messages wait it is sent again only after ten timeouts; with the
    broker down nothing is sent."""
    timeout = settings.JOB_QUEUED_TIMEOUT_SECONDS
    waiting = queued_job(queued_at=ago(timeout + 5))
    older = queued_job(queued_at=ago(timeout * jobs.LOST_AFTER_TIMEOUTS + 5))
    recent = queued_job()
    sent: list[int] = []

    monkeypatch.setattr(jobs, "broker_queue_size", lambda: None)
    assert jobs.job_sweep_lost(ImportJob, send=sent.append).resent == []
    monkeypatch.setattr(jobs, "broker_queue_size", lambda: 3)
    assert jobs.job_sweep_lost(ImportJob, send=sent.append).resent == [older.pk]
    monkeypatch.setattr(jobs, "broker_queue_size", lambda: 0)
    assert jobs.job_sweep_lost(ImportJob, send=sent.append).resent == [waiting.pk]
    assert sent == [older.pk, waiting.pk]
    assert recent.pk not in sent
    # Each send restarts the wait, so a backlog is not flooded with copies.
    assert jobs.job_sweep_lost(ImportJob, send=sent.append).resent == []


def test_a_job_queued_while_the_broker_is_down_waits_with_a_note() -> None:
    job = queued_job()

    def down() -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    assert not jobs.job_enqueue(ImportJob, job.pk, down)
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED
    assert job.message == jobs.broker_down_message()


def test_a_task_the_broker_did_not_take_is_sent_in_the_first_sweep_once_it_is_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A job whose send failed (new, released for a retry or requeued by the sweep) does not
    wait for the lost-message timeout: the first sweep that reaches the broker sends it, even
    while other messages wait in the queue; a job sent normally still waits."""
    unsent, sent_fine = queued_job(), queued_job()

    def down() -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    assert not jobs.job_send_queued(ImportJob, unsent.pk, down)
    assert jobs.job_send_queued(ImportJob, sent_fine.pk, lambda: None)
    sent: list[int] = []
    monkeypatch.setattr(jobs, "broker_queue_size", lambda: None)
    assert jobs.job_sweep_lost(ImportJob, send=sent.append).resent == []
    monkeypatch.setattr(jobs, "broker_queue_size", lambda: 3)
    assert jobs.job_sweep_lost(ImportJob, send=sent.append).resent == [unsent.pk]
    assert sent == [unsent.pk]
    # Sent now: the next round leaves it to the usual timeout.
    assert jobs.job_sweep_lost(ImportJob, send=sent.append).resent == []


@pytest.mark.postgres
@pytest.mark.redis
def test_the_broker_queue_size_is_read_from_redis(settings: Any) -> None:
    from mmooc_site.celery import app

    assert jobs.broker_queue_size() == 0  # this run's queue holds nothing (or does not exist)
    with app.connection_for_write() as connection:
        queue = app.amqp.queues[app.conf.task_default_queue]
        queue(connection.default_channel).declare()
        producer = connection.Producer()
        producer.publish({"x": 1}, routing_key=queue.routing_key, declare=[queue])
        try:
            assert jobs.broker_queue_size() == 1
        finally:
            queue(connection.default_channel).purge()


@pytest.mark.postgres
@pytest.mark.redis
def test_sweeps_piled_up_in_the_broker_never_hide_a_lost_job(settings: Any) -> None:
    """Beat's sweeps go to a queue of their own: two dozen of them waiting unread (no worker
    ran meanwhile) leave the jobs' queue empty, so a queued job whose message was lost is sent
    again after the usual timeout, not after ten."""
    from mmooc_site.celery import app

    assert app.amqp.router.route({}, "annotation.sweep_jobs")["queue"].name == (
        settings.CELERY_SWEEP_QUEUE
    )
    lost = queued_job(queued_at=ago(settings.JOB_QUEUED_TIMEOUT_SECONDS + 5))
    sweeps = app.amqp.queues[settings.CELERY_SWEEP_QUEUE]
    app.conf.task_always_eager = False
    try:
        for _ in range(24):
            sweep_jobs.apply_async(expires=30)
        with app.connection_for_write() as connection:
            declared: Any = sweeps(connection.default_channel).queue_declare(passive=True)
        assert declared.message_count == 24
        assert jobs.broker_queue_size() == 0
        sent: list[int] = []
        assert jobs.job_sweep_lost(ImportJob, send=sent.append).resent == [lost.pk]
    finally:
        app.conf.task_always_eager = True
        with app.connection_for_write() as connection:
            sweeps(connection.default_channel).purge()
