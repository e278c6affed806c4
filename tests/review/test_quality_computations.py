"""The Reviewers page's figures off the request path (review.quality_computations): the page
and the API only read what a worker stored, queue a computation when the data changed, say
so while it runs, survive a dead worker, and cost a fixed number of queries."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation import services as annotation_services
from annotation.models import ChangeSource, Dataset, JobStatus, Sample, SampleStatus
from core import roles
from review import quality_computations
from review.models import ReviewerQualityComputation
from review.quality_computations import (
    computation_run,
    computations_sweep,
    reviewer_quality_compute,
    reviewer_quality_request,
)
from review.services import exclusions, queue
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset, submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The computations whose task was sent to the broker (no worker runs them here)."""
    ids: list[int] = []
    monkeypatch.setattr(quality_computations, "computation_send", ids.append)
    return ids


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _reviewed(n_reviewers: int, *, samples: int = 2) -> tuple[Dataset, list[Any]]:
    """``samples`` samples, each reviewed by every one of ``n_reviewers`` annotators."""
    reviewers = [UserFactory.create(role=roles.ANNOTATOR) for _ in range(n_reviewers)]
    dataset = review_dataset(samples + 1, k=n_reviewers, members=reviewers)
    pending = Sample.objects.filter(dataset=dataset, status=SampleStatus.PENDING_REVIEW)
    for sample in pending.order_by("pk")[:samples]:
        for reviewer in reviewers:
            submit(reviewer, sample, seconds_spent=12)
    return dataset, reviewers


def _left(dataset: Dataset) -> Sample:
    """The sample nobody reviewed yet."""
    return Sample.objects.filter(dataset=dataset, status=SampleStatus.PENDING_REVIEW).get()


def _page(dataset: Dataset) -> str:
    return reverse("review:reviewers", args=[dataset.pk])


def _api(dataset: Dataset) -> str:
    return reverse("api_review_reviewers", args=[dataset.pk])


def _row(dataset: Dataset) -> ReviewerQualityComputation:
    return ReviewerQualityComputation.objects.get(dataset=dataset)


def test_a_first_visit_queues_the_computation_and_says_so_without_computing(
    lead: Any, sent: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    """Nothing stored yet: the page answers at once that the figures are being computed (and
    follows the computation), the API answers 202 with no figures; one task is sent."""
    dataset, _reviewers = _reviewed(2)
    with django_capture_on_commit_callbacks(execute=True):
        html = _client(lead).get(_page(dataset)).content.decode()
    assert 'data-testid="computing"' in html and "being computed by a worker" in html
    assert 'data-testid="reviewer-summary"' not in html
    state = reverse("api_review_reviewers_computation", args=[dataset.pk])
    assert f'data-job-progress-url="{state}"' in html and 'data-status="queued"' in html
    with django_capture_on_commit_callbacks(execute=True):
        reply = _client(lead).get(_api(dataset))
    assert reply.status_code == 202 and reply["Retry-After"] == "10"
    body = reply.json()
    assert body["computed_at"] is None and body["computing"] and body["reviewers"] == []
    assert sent == [_row(dataset).pk] and _row(dataset).result is None


def test_the_worker_stores_the_figures_the_page_then_shows_at_once(lead: Any) -> None:
    """The visit's task runs (eagerly, on commit, as a worker would): the next visit shows
    the figures with when they were computed, and queues nothing more."""
    dataset, reviewers = _reviewed(2)
    client = _client(lead)
    client.get(_page(dataset))  # its task would be sent on commit, which a test never reaches
    row = computation_run(computation_id=_row(dataset).pk)
    assert row is not None and row.status == JobStatus.SUCCEEDED and row.seconds is not None
    html = client.get(_page(dataset)).content.decode()
    for reviewer in reviewers:
        assert f'data-reviewer="{reviewer.username}"' in html
    assert "Reviews submitted since: 0." in html and 'data-testid="computing"' not in html
    assert _row(dataset).status == JobStatus.SUCCEEDED
    body = client.get(_api(dataset)).json()
    assert body["status"] == "succeeded" and not body["computing"]
    assert row.computed_at is not None and body["reviews_since"] == 0
    assert body["computed_at"] == row.computed_at.isoformat()
    assert [r["reviews"] for r in body["reviewers"]] == [2, 2]


def test_a_new_review_shows_the_stored_figures_as_stale_and_queues_one_run(
    lead: Any, sent: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    """After a review, the page still shows the stored figures at once, with the review that
    came in since, and queues a computation; visits while it is queued send nothing more."""
    dataset, reviewers = _reviewed(2)
    reviewer_quality_compute(dataset=dataset)
    submit(reviewers[0], _left(dataset))
    client = _client(lead)
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            html = client.get(_page(dataset)).content.decode()
        assert "Reviews submitted since: 1." in html and 'data-testid="computing"' in html
        assert f'data-reviewer="{reviewers[0].username}"' in html
    assert sent == [_row(dataset).pk] and _row(dataset).status == JobStatus.QUEUED
    body = client.get(_api(dataset)).json()
    assert body["computing"] and body["reviews_since"] == 1
    assert sorted(r["reviews"] for r in body["reviewers"]) == [2, 2]
    computation_run(computation_id=_row(dataset).pk)
    body = client.get(_api(dataset)).json()
    assert not body["computing"] and sorted(r["reviews"] for r in body["reviewers"]) == [2, 3]


@pytest.mark.parametrize("change", ["skip", "exclusion", "label"])
def test_skips_exclusions_and_label_edits_make_the_figures_stale_too(
    lead: Any, sent: list[int], change: str
) -> None:
    dataset, reviewers = _reviewed(2)
    reviewer_quality_compute(dataset=dataset)
    _client(lead).get(_page(dataset))
    assert _row(dataset).status == JobStatus.SUCCEEDED and sent == []
    if change == "skip":
        queue.slot_claim(dataset=dataset, reviewer=reviewers[1], sample_id=_left(dataset).pk)
        queue.slot_skip(sample=_left(dataset), reviewer=reviewers[1], reason="unclear image")
    elif change == "exclusion":
        exclusions.reviewer_exclude(dataset=dataset, reviewer=reviewers[1], by=lead)
    else:  # a lead corrects a settled sample's category
        settled = Sample.objects.exclude(status=SampleStatus.PENDING_REVIEW).filter(
            dataset=dataset
        )[0]
        annotation_services.sample_update(
            sample=settled, changes={"category_code": "MA"}, by=lead, source=ChangeSource.EDIT
        )
    _client(lead).get(_page(dataset))
    assert _row(dataset).status == JobStatus.QUEUED


def test_a_request_while_running_is_followed_by_one_more_run(
    sent: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change while the figures are computed is not lost: the run stores its result, then
    the row is queued again and its task sent once more."""
    dataset, reviewers = _reviewed(2)
    pk = reviewer_quality_request(dataset=dataset, send=False)
    real = quality_computations._compute

    def compute_while_reviewed(row: ReviewerQualityComputation) -> dict[str, Any]:
        result = real(row)
        submit(reviewers[0], _left(dataset))
        reviewer_quality_request(dataset=dataset)
        return result

    monkeypatch.setattr(quality_computations, "_compute", compute_while_reviewed)
    row = computation_run(computation_id=pk)
    assert row is not None and row.status == JobStatus.QUEUED and row.result is not None
    assert row.result["reviews"] == 4 and sent == [pk]


def test_a_failed_computation_keeps_the_last_figures_and_says_why(
    lead: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset, reviewers = _reviewed(2)
    first = reviewer_quality_compute(dataset=dataset)
    assert first is not None and first.result is not None

    def broken(row: ReviewerQualityComputation) -> dict[str, Any]:
        raise RuntimeError("numpy went away")

    monkeypatch.setattr(quality_computations, "_compute", broken)
    failed = reviewer_quality_compute(dataset=dataset)
    assert failed is not None and failed.status == JobStatus.FAILED
    assert failed.result == first.result
    html = _client(lead).get(_page(dataset)).content.decode()
    assert "The last computation failed: RuntimeError: numpy went away" in html
    assert f'data-reviewer="{reviewers[0].username}"' in html


def test_the_sweep_runs_again_a_computation_whose_worker_died(
    sent: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A running row whose heartbeat stopped is queued again and its task sent; out of
    attempts, it fails with the reason instead of "running" for ever."""
    dataset, _reviewers = _reviewed(1)
    pk = reviewer_quality_request(dataset=dataset, send=False)
    dead = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 5)
    ReviewerQualityComputation.objects.filter(pk=pk).update(
        status=JobStatus.RUNNING, attempts=1, heartbeat_at=dead
    )
    resent: list[int] = []
    monkeypatch.setattr(quality_computations, "enqueue", lambda name, pk: resent.append(pk))
    result = computations_sweep()
    assert result.requeued == [pk] and resent == [pk]
    assert ReviewerQualityComputation.objects.get(pk=pk).status == JobStatus.QUEUED
    ReviewerQualityComputation.objects.filter(pk=pk).update(
        status=JobStatus.RUNNING, attempts=settings.JOB_MAX_ATTEMPTS, heartbeat_at=dead
    )
    assert computations_sweep().failed == [pk]
    row = ReviewerQualityComputation.objects.get(pk=pk)
    assert row.status == JobStatus.FAILED and "Given up" in row.message
    assert computation_run(computation_id=pk) == row  # a late message leaves it alone


def test_the_beat_schedule_sweeps_review() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["review-sweep-jobs"]
    assert entry["task"] == "review.sweep_jobs"


def test_a_reviewer_reads_only_their_own_row_of_the_stored_figures() -> None:
    """The stored report holds everyone; a reviewer is shown their own row, co-reviewers
    unnamed; a member who never reviewed gets an empty row of their own."""
    dataset, (mine, other) = _reviewed(2)
    reviewer_quality_compute(dataset=dataset)
    stored = _row(dataset).result
    assert stored is not None and len(stored["rows"]) == 2
    body = _client(mine).get(_api(dataset)).json()
    assert [r["username"] for r in body["reviewers"]] == [mine.username]
    assert other.username not in str(body) and not body["everyone"]
    assert body["reviewers"][0]["by_field"][0]["kappas"][0]["co_reviewer"] == "co-reviewer 1"
    newcomer = UserFactory.create(role=roles.ANNOTATOR)
    annotation_services.dataset_add_member(dataset=dataset, user=newcomer)
    body = _client(newcomer).get(_api(dataset)).json()
    assert [(r["username"], r["reviews"]) for r in body["reviewers"]] == [(newcomer.username, 0)]
    assert mine.username not in str(body)


def test_the_computation_state_endpoint(lead: Any, annotator: Any) -> None:
    dataset, _reviewers = _reviewed(1)
    url = reverse("api_review_reviewers_computation", args=[dataset.pk])
    assert _client(lead).get(url).json()["status"] == "queued"  # nothing requested yet
    reviewer_quality_compute(dataset=dataset)
    body = _client(lead).get(url).json()
    assert body["status"] == "succeeded" and body["finished"] and body["computed_at"]
    assert _client(annotator).get(url).status_code == 404


def _queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code in (200, 202)
    return len(ctx.captured_queries)


@pytest.mark.parametrize("url", [_page, _api])
def test_page_and_api_cost_fixed_queries_whatever_the_size(
    lead: Any, url: Any, sent: list[int]
) -> None:
    """Fresh figures, stale figures (queued again) and nothing stored: the same queries for
    2 reviewers × 2 samples as for 5 × 6."""
    counts: dict[str, list[int]] = {"none": [], "fresh": [], "stale": []}
    for n, samples in ((2, 2), (5, 6)):
        dataset, reviewers = _reviewed(n, samples=samples)
        client = _client(lead)
        counts["none"].append(_queries(client, url(dataset)))
        reviewer_quality_compute(dataset=dataset)
        counts["fresh"].append(_queries(client, url(dataset)))
        submit(reviewers[0], _left(dataset))
        counts["stale"].append(_queries(client, url(dataset)))
    # Fresh: session, user, dataset, role, the row, the state of the data. Stale or never
    # computed: the request's lock and update of the row besides (its creation, the first time;
    # the page then also reads the roles, for its top bar's People link).
    none = 16 if url is _page else 15
    assert counts == {"none": [none, none], "fresh": [6, 6], "stale": [14, 14]}
