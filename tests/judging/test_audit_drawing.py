"""Audit draws that outlive their workers (judging.audit.drawing): a failed draw is retried,
a draw whose worker died is drawn again, the sweep sends it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import JobStatus
from judging import tasks
from judging.audit import services
from judging.models import AuditItem, AuditSet
from tests.annotation.factories import mmooc_dataset
from tests.judging.audit_factories import scoring_dataset

pytestmark = pytest.mark.django_db


def test_a_failed_draw_is_retried_from_its_page_once_the_judges_ran(
    lead: Any, django_capture_on_commit_callbacks: Any
) -> None:
    dataset = mmooc_dataset()
    audit_set = services.audit_set_create(
        dataset=dataset, name="a", task="scoring", size=10, queue=False
    )
    failed = services.audit_set_draw_run(audit_set_id=audit_set.pk)
    assert failed is not None and failed.status == JobStatus.FAILED
    scoring_dataset(n_samples=20, dataset=dataset)
    client = Client()
    client.force_login(lead)
    page = client.get(reverse("judging:audit_detail", args=[audit_set.pk])).content.decode()
    retry = reverse("judging:audit_retry", args=[audit_set.pk])
    assert retry in page
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(retry).status_code == 302
    audit_set.refresh_from_db()
    assert audit_set.status == JobStatus.SUCCEEDED, audit_set.message
    assert AuditItem.objects.filter(audit_set=audit_set).count() == 10


def test_a_draw_whose_worker_died_is_swept_and_drawn_again(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    dataset, _judges = scoring_dataset(n_samples=20)
    audit_set = services.audit_set_create(
        dataset=dataset, name="a", task="scoring", size=10, queue=False
    )
    stale = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    AuditSet.objects.filter(pk=audit_set.pk).update(
        status=JobStatus.RUNNING, attempts=1, heartbeat_at=stale
    )
    sent: list[int] = []
    monkeypatch.setattr(tasks.draw_audit_set, "delay", sent.append)
    assert services.audit_sets_sweep().requeued == [audit_set.pk] == sent
    drawn = services.audit_set_draw_run(audit_set_id=audit_set.pk)
    assert drawn is not None and (drawn.status, drawn.attempts) == (JobStatus.SUCCEEDED, 2)
    assert AuditItem.objects.filter(audit_set=audit_set).count() == 10
