"""Snapshots that outlive their workers (annotation.snapshots.services): a build whose worker
died starts over, a live one is left alone, a failed one is retried, the sweep sends them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import tasks
from annotation.models import JobStatus, Snapshot
from annotation.snapshots import services as snapshot_services
from tests.annotation.factories import mmooc_dataset
from tests.annotation.test_snapshots import verified
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def queued_snapshot(name: str = "v1") -> Snapshot:
    dataset = mmooc_dataset()
    for _ in range(3):
        verified(dataset)
    return snapshot_services.snapshot_create(
        dataset=dataset, name=name, format="jsonl", queue=False
    )


def test_a_build_in_a_live_worker_is_left_alone_and_a_dead_ones_started_over(
    settings: Any,
) -> None:
    snapshot = queued_snapshot()
    Snapshot.objects.filter(pk=snapshot.pk).update(
        status=JobStatus.RUNNING, attempts=1, heartbeat_at=timezone.now(), done=2
    )
    again = snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    assert again is not None and (again.status, again.done) == (JobStatus.RUNNING, 2)
    stale = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    Snapshot.objects.filter(pk=snapshot.pk).update(heartbeat_at=stale)
    built = snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    assert built is not None
    assert built.status == JobStatus.SUCCEEDED, built.message
    assert (built.done, built.entries.count(), built.attempts) == (3, 3, 2)


def test_a_failed_snapshot_is_retried_through_the_api(
    monkeypatch: pytest.MonkeyPatch, lead: Any, django_capture_on_commit_callbacks: Any
) -> None:
    snapshot = queued_snapshot()

    def disk_full(*args: Any) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(snapshot_services, "_build", disk_full)
    failed = snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    assert failed is not None and failed.status == JobStatus.FAILED
    assert "No space left" in failed.message
    monkeypatch.undo()
    url = reverse("api_snapshot_retry", args=[snapshot.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(lead).post(url)
    assert response.status_code == 200
    snapshot.refresh_from_db()
    assert snapshot.status == JobStatus.SUCCEEDED and snapshot.entries.count() == 3
    assert client_for(lead).post(url).status_code == 409


def test_the_sweep_sends_a_snapshot_whose_worker_died(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    snapshot = queued_snapshot()
    stale = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    Snapshot.objects.filter(pk=snapshot.pk).update(
        status=JobStatus.RUNNING, attempts=1, heartbeat_at=stale
    )
    sent: list[int] = []
    monkeypatch.setattr(tasks.build_snapshot, "delay", sent.append)
    assert snapshot_services.snapshots_sweep().requeued == [snapshot.pk] == sent
