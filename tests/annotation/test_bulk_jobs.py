"""Bulk actions on more samples than a request should move (annotation/services/bulk_jobs.py
and the sample list's bulk view): a background job with a page that follows it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import services, tasks
from annotation.models import SampleBulkJob, SampleRevision, SampleStatus
from annotation.sample_filters import SampleFilter
from annotation.services import bulk_jobs
from core.jobs import JobStatus
from review.models import Assignment, Slot
from tests.annotation.factories import mmooc_sample
from tests.annotation.test_sample_views import dataset_with
from tests.conftest import client_for
from tests.support.http import browser

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_inline_max(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three samples count as "many" (instead of 2,000)."""
    monkeypatch.setattr(bulk_jobs, "INLINE_MAX", 2)


@pytest.mark.usefixtures("small_inline_max")
def test_a_large_selection_runs_in_the_background_and_its_page_says_what_it_did(
    lead: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """Confirming an action on more than INLINE_MAX samples queues a job instead of moving
    them in the request and leads to its page, which, once the worker ran it, says what the
    action did and links back to the filtered list; the history names the lead."""
    dataset = dataset_with(4)
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    client = browser(lead)
    form = {"action": "send_to_review", "scope": "all", "search": "car", "confirm": "1"}
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(reverse("annotation:sample_bulk", args=[dataset.pk]), form)
    job = SampleBulkJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:sample_bulk_job", args=[job.pk])
    assert (job.status, job.selected, job.created_by) == (JobStatus.QUEUED, 5, lead)
    assert sample_statuses(dataset) == {SampleStatus.IMPORTED: 4, SampleStatus.VERIFIED: 1}
    waiting = client.get(response["Location"])
    assert "no-store" in waiting["Cache-Control"]
    assert 'data-running="1"' in waiting.content.decode()

    for callback in callbacks:  # the task is sent on commit and runs (eagerly) here
        callback()
    job.refresh_from_db()
    assert (job.status, job.changed, job.skipped, job.slots_opened) == ("succeeded", 4, 1, 8)
    assert sample_statuses(dataset) == {
        SampleStatus.PENDING_REVIEW: 4,
        SampleStatus.VERIFIED: 1,
    }
    assert (
        SampleRevision.objects.filter(changed_by=lead, after__status="pending_review").count() == 4
    )
    page = client.get(response["Location"]).content.decode()
    assert "4 samples sent to review; 8 review slots opened." in page
    assert 'data-running="0"' in page
    assert reverse("annotation:sample_list", args=[dataset.pk]) + "?search=car" in page

    again = services.sample_bulk_job_run(job_id=job.pk)  # a second delivery
    assert again is not None and again.changed == 4
    assert Slot.objects.filter(dataset=dataset).count() == 8


@pytest.mark.usefixtures("small_inline_max")
def test_a_refused_large_action_is_refused_at_once_and_queues_nothing(lead: Any) -> None:
    """A takedown without a reason is refused in the request, as for a small selection."""
    dataset = dataset_with(3)
    form = {"action": "take_down", "scope": "all", "confirm": "1"}
    done = browser(lead).post(
        reverse("annotation:sample_bulk", args=[dataset.pk]), form, follow=True
    )
    assert "Say why these samples are taken down." in done.content.decode()
    assert not SampleBulkJob.objects.exists()


def test_a_job_whose_action_fails_ends_failed_with_the_reason_and_changes_nothing(
    lead: Any,
) -> None:
    """A job the worker cannot carry out fails with a readable message; nothing moved."""
    dataset = dataset_with(3)
    job = SampleBulkJob.objects.create(
        dataset=dataset,
        action="set_priority",
        params={"filter": "", "ids": None, "priority": 5000, "reason": ""},
        selected=3,
        created_by=lead,
    )
    done = services.sample_bulk_job_run(job_id=job.pk)
    assert done is not None and done.status == JobStatus.FAILED
    assert "priority lies between" in done.message
    assert not dataset.samples.exclude(priority=0).exists()


def test_a_job_of_another_dataset_is_hidden_and_annotators_are_refused(
    lead: Any, annotator: Any
) -> None:
    """Only leads open a bulk job's page; its counts are those of the dataset it ran on."""
    dataset = dataset_with(3)
    job = services.sample_bulk_job_create(
        dataset=dataset,
        action="restore",
        filter=SampleFilter.from_params({}),
        ids=None,
        selected=3,
        by=lead,
    )
    url = reverse("annotation:sample_bulk_job", args=[job.pk])
    assert browser(lead).get(url).status_code == 200
    services.dataset_add_member(dataset=dataset, user=annotator)
    refused = browser(annotator).get(url)
    assert refused.status_code == 403 and "Only project leads" in refused.content.decode()
    assert (
        browser(lead).get(reverse("annotation:sample_bulk_job", args=[job.pk + 1])).status_code
        == 404
    )


def sample_statuses(dataset: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for status in dataset.samples.values_list("status", flat=True):
        counts[status] = counts.get(status, 0) + 1
    return counts


@pytest.mark.usefixtures("small_inline_max")
def test_the_api_answers_202_with_the_job_and_its_status_address(
    lead: Any, annotator: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """A large selection by API is queued: 202 with the job; its status address shows the
    counts once the worker ran it; non-leads may not read it."""
    dataset = dataset_with(3)
    client = client_for(lead)
    url = f"/api/datasets/{dataset.pk}/samples/bulk/?search=car"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"action": "set_priority", "priority": 7}, format="json")
    assert response.status_code == 202
    body = response.json()
    assert response["Location"] == f"/api/bulk-actions/{body['id']}/"
    assert (body["action"], body["status"], body["selected"]) == ("set_priority", "queued", 3)
    assert body["page_url"] == reverse("annotation:sample_bulk_job", args=[body["id"]])
    done = client.get(body["status_url"]).json()
    assert (done["status"], done["changed"], done["skipped"]) == ("succeeded", 3, 0)
    assert set(dataset.samples.values_list("priority", flat=True)) == {7}
    assert client_for(annotator).get(body["status_url"]).status_code == 403
    small = client.post(
        f"/api/datasets/{dataset.pk}/send-to-review/",
        {"ids": list(dataset.samples.values_list("pk", flat=True)[:2])},
        format="json",
    )
    assert small.status_code == 200 and small.json()["changed"] == 2


def test_a_bulk_job_in_a_live_worker_is_left_alone_and_a_dead_ones_is_swept_and_run(
    lead: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delivery while another worker's heartbeat is fresh does nothing; once it is stale,
    the sweep queues the job again and sends its task, and the next run does the work."""
    dataset = dataset_with(3)
    job = SampleBulkJob.objects.create(
        dataset=dataset,
        action="take_down",
        params={"filter": "", "ids": None, "priority": None, "reason": "licence"},
        selected=3,
        created_by=lead,
        status=JobStatus.RUNNING,
        attempts=1,
        heartbeat_at=timezone.now(),
    )
    alive = services.sample_bulk_job_run(job_id=job.pk)
    assert alive is not None and alive.status == JobStatus.RUNNING
    assert not dataset.samples.filter(status=SampleStatus.REMOVED).exists()
    stale = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    SampleBulkJob.objects.filter(pk=job.pk).update(heartbeat_at=stale)
    sent: list[int] = []
    monkeypatch.setattr(tasks.run_sample_bulk_job, "delay", sent.append)
    assert bulk_jobs.sample_bulk_jobs_sweep().requeued == [job.pk] == sent
    done = services.sample_bulk_job_run(job_id=job.pk)
    assert done is not None and (done.status, done.changed, done.attempts) == ("succeeded", 3, 2)
    assert dataset.samples.filter(status=SampleStatus.REMOVED).count() == 3


@pytest.mark.usefixtures("small_inline_max")
def test_a_large_assignment_runs_in_the_background(lead: Any, annotator: Any) -> None:
    """Assigning more than INLINE_MAX samples is a job that assigns them all to the people
    named; naming a non-member is refused before any job is queued."""
    dataset = dataset_with(4)
    services.dataset_add_member(dataset=dataset, user=annotator)
    refused = {"action": "assign", "scope": "all", "confirm": "1", "assignees": ["nobody"]}
    client = browser(lead)
    answer = client.post(reverse("annotation:sample_bulk", args=[dataset.pk]), refused, follow=True)
    assert "Not an annotator of this dataset: nobody." in answer.content.decode()
    assert not SampleBulkJob.objects.exists()
    job = services.samples_bulk_start(
        dataset=dataset,
        action="assign",
        filter=SampleFilter(),
        ids=None,
        by=lead,
        assignees=[annotator.username],
    )
    assert isinstance(job, SampleBulkJob)
    done = bulk_jobs.sample_bulk_job_run(job_id=job.pk)
    assert done is not None and (done.status, done.changed) == (JobStatus.SUCCEEDED, 4)
    assert Assignment.objects.filter(dataset=dataset, reviewer=annotator).count() == 4
