"""Regression tests of issue 25's defects that live in the review queue, from an empty site."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Sample, SampleStatus
from annotation.services.bulk import samples_send_to_review
from review.models import Slot
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory
from tests.annotation.imports_support import (
    b64,
    dataset_for,
    image,
    mmooc_record,
    run_import,
    write_lines,
)
from tests.review.factories import open_queue, submit

pytestmark = pytest.mark.django_db


def test_defect_2_samples_a_reimport_sends_back_to_review_get_slots(tmp_path: Path) -> None:
    """A verified sample whose image the source changed goes back to review; with the queue
    open, it gets k slots in a new round at once and a reviewer who has not reviewed it can
    claim it (before the fix every claim found nothing until a lead re-opened the queue)."""
    dataset = dataset_for("mmooc", "mmooc")
    first, second = (UserFactory.create(member_of=dataset) for _ in range(2))
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(1)])
    assert run_import(dataset, "mmooc", path).imported == 1
    open_queue(dataset, k=1)
    samples_send_to_review(dataset=dataset, samples=Sample.objects.all(), by=None)
    sample = Sample.objects.get()
    submit(first, sample)
    sample.refresh_from_db()
    assert sample.status == SampleStatus.VERIFIED

    write_lines(path, [mmooc_record(1, image=b64(image(77)))])
    assert run_import(dataset, "mmooc", path).updated == 1
    sample.refresh_from_db()
    assert sample.status == SampleStatus.PENDING_REVIEW
    open_slots = Slot.objects.filter(sample=sample, done=False)
    assert open_slots.count() == 1 and open_slots.get().round == 1  # rounds count from 0
    lease = queue_services.slot_claim(dataset=dataset, reviewer=second)
    assert lease is not None and lease.sample_id == sample.pk
