"""Bulk actions on samples (annotation/services/bulk.py): send to review, take down, restore,
priorities; each status move in the history, the review queue kept in step, and a fixed
number of statements whatever the number of samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.extensions import review_queue_register
from annotation.imports import services as import_services
from annotation.models import ChangeSource, ImportSourceKind, Sample, SampleRevision, SampleStatus
from review.hooks import ReviewQueueForAnnotation
from review.models import Slot
from review.queue.services import queue_sync, slot_claim
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.annotation.imports_support import build_mmooc, dataset_for
from tests.review.factories import open_queue, submit

pytestmark = pytest.mark.django_db


def imported(dataset: Any, n: int, **fields: Any) -> list[Sample]:
    return [mmooc_sample(dataset, status=SampleStatus.IMPORTED, **fields) for _ in range(n)]


def test_send_to_review_moves_imported_samples_and_opens_their_slots(lead: Any) -> None:
    """Imported samples go to pending review with a history row each and get k slots; samples
    in other statuses are counted as skipped and left alone; a second call sends nothing."""
    dataset = open_queue(mmooc_dataset(), k=2)
    fresh = imported(dataset, 3)
    verified = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    result = services.samples_send_to_review(dataset=dataset, samples=Sample.objects.all(), by=lead)
    assert (result.changed, result.skipped, result.slots_opened) == (3, 1, 6)
    for sample in fresh:
        sample.refresh_from_db()
        assert (sample.status, sample.revision) == (SampleStatus.PENDING_REVIEW, 2)
        last = SampleRevision.objects.get(sample=sample, number=2)
        assert last.source == ChangeSource.STATUS and last.changed_by == lead
        assert (last.before, last.after) == ({"status": "imported"}, {"status": "pending_review"})
    assert Slot.objects.filter(sample__in=fresh).count() == 6
    verified.refresh_from_db()
    assert verified.status == SampleStatus.VERIFIED and verified.revision == 1
    again = services.samples_send_to_review(dataset=dataset, samples=Sample.objects.all(), by=lead)
    assert (again.changed, again.slots_opened) == (0, 0)


def test_an_annotator_can_claim_what_was_sent(lead: Any, annotator: Any) -> None:
    """Before sending, the queue is empty for a reviewer; after, the claim leases a sample."""
    dataset = mmooc_dataset()
    imported(dataset, 2)
    services.dataset_add_member(dataset=dataset, user=annotator)
    queue_sync(dataset=dataset)
    assert slot_claim(dataset=dataset, reviewer=annotator) is None
    services.samples_send_to_review(dataset=dataset, samples=Sample.objects.all(), by=lead)
    assert slot_claim(dataset=dataset, reviewer=annotator) is not None


def test_only_the_selection_is_sent_and_other_datasets_are_untouched(lead: Any) -> None:
    """The selection is any queryset; samples of another dataset never move."""
    dataset, other = mmooc_dataset(), mmooc_dataset()
    first, second = imported(dataset, 2)
    stranger = imported(other, 1)[0]
    result = services.samples_send_to_review(
        dataset=dataset, samples=Sample.objects.filter(pk__in=[first.pk, stranger.pk]), by=lead
    )
    assert result.changed == 1
    statuses = dict(Sample.objects.values_list("pk", "status"))
    assert statuses[first.pk] == SampleStatus.PENDING_REVIEW
    assert statuses[second.pk] == statuses[stranger.pk] == SampleStatus.IMPORTED


def test_settled_samples_go_back_for_a_new_round_only_when_asked(lead: Any) -> None:
    """Rejected samples are sent only when their status is asked for; a sample in review or
    awaiting adjudication can never be sent."""
    dataset = mmooc_dataset()
    rejected = mmooc_sample(dataset, status=SampleStatus.REJECTED)
    assert (
        services.samples_send_to_review(
            dataset=dataset, samples=Sample.objects.all(), by=lead
        ).changed
        == 0
    )
    result = services.samples_send_to_review(
        dataset=dataset, samples=Sample.objects.all(), by=lead, from_statuses=["rejected"]
    )
    assert result.changed == 1 and result.slots_opened == 2
    rejected.refresh_from_db()
    assert rejected.status == SampleStatus.PENDING_REVIEW
    with pytest.raises(ValidationError, match="can be sent to review"):
        services.samples_send_to_review(
            dataset=dataset, samples=Sample.objects.all(), by=lead, from_statuses=["in_review"]
        )


def test_take_down_closes_open_slots_and_restore_brings_the_sample_back(
    lead: Any, annotator: Any
) -> None:
    """A takedown needs a reason, removes the samples from the queue (nobody is served them)
    and is kept in history; restoring returns each to its earlier status and reopens slots,
    keeping the reviews already given."""
    dataset = open_queue(mmooc_dataset(), k=2, members=[annotator])
    reviewer2 = UserFactory.create(role="annotator")
    pending, verified = mmooc_sample(dataset), mmooc_sample(dataset)
    queue_sync(dataset=dataset)
    submit(reviewer2, pending)
    Sample.objects.filter(pk=verified.pk).update(status=SampleStatus.VERIFIED)
    both = Sample.objects.filter(pk__in=[pending.pk, verified.pk])
    with pytest.raises(ValidationError, match="Say why"):
        services.samples_take_down(dataset=dataset, samples=both, by=lead, reason=" ")
    result = services.samples_take_down(dataset=dataset, samples=both, by=lead, reason="licence")
    assert result.changed == 2
    assert slot_claim(dataset=dataset, reviewer=annotator) is None
    takedown = SampleRevision.objects.filter(sample=pending).last()
    assert takedown is not None and takedown.source == ChangeSource.TAKEDOWN
    assert takedown.reason == "licence" and takedown.before == {"status": "in_review"}

    restored = services.samples_restore(dataset=dataset, samples=both, by=lead)
    assert restored.changed == 2 and restored.slots_opened == 1
    statuses = dict(both.values_list("pk", "status"))
    assert statuses == {pending.pk: "pending_review", verified.pk: "verified"}
    lease = slot_claim(dataset=dataset, reviewer=annotator)
    assert lease is not None and lease.sample_id == pending.pk
    assert Slot.objects.filter(sample=pending, done=True).count() == 1


def test_priority_reorders_the_open_slots(lead: Any) -> None:
    """A new priority reaches the sample and its open slots; out-of-range values are refused."""
    dataset = open_queue(mmooc_dataset(), k=1)
    low, high = mmooc_sample(dataset), mmooc_sample(dataset)
    queue_sync(dataset=dataset)
    result = services.samples_set_priority(
        dataset=dataset, samples=Sample.objects.filter(pk=high.pk), priority=5
    )
    assert result.changed == 1
    assert Slot.objects.get(sample=high).priority == 5
    assert Slot.objects.get(sample=low).priority == 0
    with pytest.raises(ValidationError, match="between"):
        services.samples_set_priority(dataset=dataset, samples=Sample.objects.all(), priority=10**6)


def test_bulk_moves_cost_a_few_statements_per_batch_not_per_sample(lead: Any) -> None:
    """Sending 300 samples instead of 10 adds a few batch statements, not one per sample (the
    same count, in batches of 900)."""

    def statements(n: int) -> int:
        dataset = mmooc_dataset()
        imported(dataset, n)
        with CaptureQueriesContext(connection) as captured:
            result = services.samples_send_to_review(
                dataset=dataset, samples=Sample.objects.filter(dataset=dataset), by=lead
            )
        assert result.changed == n
        return len(captured.captured_queries)

    few, many = statements(10), statements(300)
    assert many - few < 15
    if connection.vendor == "postgresql":
        assert many == few


def test_without_a_review_queue_samples_move_and_no_slot_opens(lead: Any) -> None:
    """Annotation alone (no review app plugged in) still moves samples, opening no slot."""
    dataset = mmooc_dataset()
    imported(dataset, 1)
    review_queue_register(None)
    try:
        result = services.samples_send_to_review(
            dataset=dataset, samples=Sample.objects.all(), by=lead
        )
    finally:
        review_queue_register(ReviewQueueForAnnotation())
    assert (result.changed, result.slots_opened) == (1, 0)
    assert not Slot.objects.exists()


@pytest.mark.parametrize("auto", [False, True])
def test_an_import_sends_its_samples_on_when_the_dataset_says_so(
    lead: Any, tmp_path: Path, auto: bool
) -> None:
    """With "send new imports to review automatically" on, an import ends with its samples
    pending review and their slots open; off (the default), they stay imported."""
    corpus = build_mmooc(tmp_path / "mm")
    dataset = dataset_for(corpus.format, corpus.preset)
    assert dataset.auto_send_to_review is False
    services.dataset_set_auto_send(dataset=dataset, enabled=auto)
    job = import_services.import_job_create(
        dataset=dataset,
        format=corpus.format,
        source_kind=ImportSourceKind.SERVER_PATH,
        source=str(corpus.folder),
        created_by=lead,
        trusted=True,
        queue=False,
    )
    import_services.import_job_run(job_id=job.pk)
    statuses = set(Sample.objects.filter(dataset=dataset).values_list("status", flat=True))
    if auto:
        assert statuses == {SampleStatus.PENDING_REVIEW}
        assert Slot.objects.filter(dataset=dataset).count() == 2 * corpus.rows
    else:
        assert statuses == {SampleStatus.IMPORTED}
        assert not Slot.objects.filter(dataset=dataset).exists()
