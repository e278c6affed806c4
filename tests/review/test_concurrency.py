"""The queue's promises under real concurrency on PostgreSQL: threads with their own
connections hammer claim and submit, and the invariants are checked in the database."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import Count
from django.test.utils import CaptureQueriesContext

from annotation import services as annotation_services
from annotation.models import NoteKey, Sample, SampleNote, SampleStatus
from core.roles import user_roles
from review import services
from review.models import Review, Slot
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset
from tests.support.threads import LeaseLedger, run_threads

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WORKERS = 12


def test_concurrent_reviewers_keep_every_queue_invariant() -> None:
    """12 reviewers claiming and submitting at once: no slot leased twice at once, no sample
    over k reviews, nobody reviewing a sample twice, and every sample ends with k reviews."""
    k, n_samples = 2, 30
    dataset = review_dataset(n_samples, k=k)
    reviewers = [UserFactory.create(member_of=dataset) for _ in range(WORKERS)]
    leases = LeaseLedger()

    def work(index: int) -> None:
        reviewer = reviewers[index]
        while (lease := queue_services.slot_claim(dataset=dataset, reviewer=reviewer)) is not None:
            leases.take(lease.slot_id, reviewer.pk)
            sample = Sample.objects.select_related("dataset").get(pk=lease.sample_id)
            leases.release(lease.slot_id)
            services.review_submit(
                reviewer=reviewer,
                sample=sample,
                client_uuid=uuid.uuid4(),
                decision="accept",
                seconds_spent=1,
            )

    errors = run_threads(WORKERS, work)
    assert errors == []
    assert leases.doubled == []
    per_sample = dict(
        Review.objects.values_list("sample").annotate(n=Count("id")).values_list("sample", "n")
    )
    assert len(per_sample) == n_samples
    assert set(per_sample.values()) == {k}
    assert (
        Review.objects.values("sample", "reviewer").annotate(n=Count("id")).filter(n__gt=1).count()
        == 0
    )
    assert Slot.objects.filter(dataset=dataset, done=False).count() == 0
    statuses = set(Sample.objects.filter(dataset=dataset).values_list("status", flat=True))
    assert statuses == {SampleStatus.VERIFIED}
    # Each settlement saw the round's every review, also one committed while it waited.
    summaries = SampleNote.objects.filter(sample__dataset=dataset, key=NoteKey.REVIEW_SUMMARY)
    assert sorted(len((note.value or {})["reviewers"]) for note in summaries) == [k] * n_samples


def test_concurrent_claims_by_one_reviewer_share_one_lease() -> None:
    """Eight simultaneous claims by the same reviewer (a double click times eight) all get
    the same lease, and only one slot is held."""
    dataset = review_dataset(10, k=2)
    reviewer = UserFactory.create(member_of=dataset)
    slots: list[int] = []

    def claim(_index: int) -> None:
        lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
        assert lease is not None
        slots.append(lease.slot_id)

    assert run_threads(8, claim) == []
    assert len(set(slots)) == 1
    assert Slot.objects.filter(reviewer=reviewer).count() == 1


def test_concurrent_duplicate_submissions_make_one_review() -> None:
    """The same submission sent eight times at once makes one review."""
    dataset = review_dataset(1, k=2)
    reviewer = UserFactory.create(member_of=dataset)
    queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    key = uuid.uuid4()
    sample_id = Sample.objects.get(dataset=dataset).pk
    results: list[Any] = []

    def send(_index: int) -> None:
        sample = Sample.objects.select_related("dataset").get(pk=sample_id)
        results.append(
            services.review_submit(
                reviewer=reviewer, sample=sample, client_uuid=key, decision="accept"
            )
        )

    assert run_threads(8, send) == []
    assert Review.objects.count() == 1
    assert sum(1 for r in results if r.created) == 1


def test_a_settling_review_that_waited_for_the_first_settles_in_one_statement() -> None:
    """The second review of a sample, sent while the first one's transaction still holds the
    sample's slots, waits for it, then settles the sample in one statement: the sample its lock
    read in the statement's snapshot (before the first review moved it to "in review") is
    brought up to date by the write after the wait, so the settlement is not refused as
    "moved meanwhile" and left to annotation's full update."""
    dataset = review_dataset(1, k=2)
    first, second = (
        UserFactory.create(role="annotator", member_of=dataset),
        UserFactory.create(role="annotator", member_of=dataset),
    )
    for reviewer in (first, second):
        annotation_services.dataset_add_member(dataset=dataset, user=reviewer)
        assert queue_services.slot_claim(dataset=dataset, reviewer=reviewer) is not None
    sample_id = Sample.objects.get(dataset=dataset).pk
    user_roles(second)  # known, as token authentication knows them
    locked, waiting, results = threading.Event(), threading.Event(), {}

    def submit(reviewer: Any) -> Any:
        return services.review_submit_visible(
            reviewer=reviewer, sample_id=sample_id, client_uuid=uuid.uuid4(), decision="accept"
        )

    def work(index: int) -> None:
        if index == 0:
            with transaction.atomic():  # holds the slot locks until the second one waits
                results["first"] = submit(first)
                locked.set()
                assert waiting.wait(timeout=30)
        else:
            assert locked.wait(timeout=30)
            with CaptureQueriesContext(connection) as queries:
                results["second"] = submit(second)
            results["statements"] = [q["sql"] for q in queries.captured_queries]

    def watch(_index: int) -> None:
        assert locked.wait(timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
                if cursor.fetchone()[0]:
                    waiting.set()
                    return
            time.sleep(0.01)  # polling PostgreSQL's view of the wait: no event to wait on

    assert run_threads(3, lambda i: work(i) if i < 2 else watch(i)) == []
    assert waiting.is_set()
    assert results["first"].settled_status is None
    assert results["second"].settled_status == SampleStatus.VERIFIED
    assert Sample.objects.get(pk=sample_id).status == SampleStatus.VERIFIED
    # BEGIN, the lock reading the sample, the review write, the settlement, COMMIT.
    assert len(results["statements"]) == 5, results["statements"]
