"""The claim's statement (review/queue/statements.py): a reviewer whose own samples' other slots
fill the head of the queue, fewer of them than the head of the walk probes one by one, as many
or more (then the walk of the whole queue serves them), is served the first slot in the
queue's order that they may take, whichever part of the statement finds it."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from annotation.models import Dataset, Sample
from review.models import Skip, Slot
from review.queue import services as queue_services
from review.queue import statements
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset

pytestmark = pytest.mark.django_db

HELD = [0, 3, statements.HEAD - 1, statements.HEAD, statements.HEAD + 5]


def _veteran(held: int, extra: int = 4) -> tuple[Dataset, Any, list[int]]:
    """A dataset of ``held + extra`` samples (k = 2) and a reviewer who has done the first slot
    of the first ``held`` of them: their other slots head the queue. The samples in order."""
    dataset = review_dataset(held + extra, k=2)
    veteran = UserFactory.create(member_of=dataset)
    order = sorted(Slot.objects.filter(dataset=dataset).values_list("sample_id", flat=True))
    samples = list(dict.fromkeys(order))
    Slot.objects.filter(dataset=dataset, position=0, sample_id__in=samples[:held]).update(
        reviewer=veteran, done=True, leased_at=timezone.now()
    )
    return dataset, veteran, samples


def _claim(dataset: Dataset, reviewer: Any, **kwargs: Any) -> int | None:
    lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, **kwargs)
    return None if lease is None else lease.sample_id


@pytest.mark.parametrize("held", HELD)
def test_a_veteran_is_served_the_first_sample_they_hold_no_slot_of(held: int) -> None:
    dataset, veteran, samples = _veteran(held)
    assert _claim(dataset, veteran) == samples[held]
    assert Slot.objects.get(reviewer=veteran, done=False).position == 0


@pytest.mark.parametrize("held", HELD)
def test_a_veteran_passes_over_slots_leased_and_samples_skipped(held: int) -> None:
    """The first sample they may take has both slots leased by others; the next one they
    skipped: they are served the one after, and the skipped one when they ask for those."""
    dataset, veteran, samples = _veteran(held)
    later = timezone.now() + dt.timedelta(minutes=10)
    for position in (0, 1):
        other = UserFactory.create(member_of=dataset)
        Slot.objects.filter(sample_id=samples[held], position=position).update(
            reviewer=other, leased_at=timezone.now(), lease_expires_at=later
        )
    Skip.objects.create(
        sample_id=samples[held + 1], dataset=dataset, reviewer=veteran, reason="later"
    )
    assert _claim(dataset, veteran) == samples[held + 2]
    taken = Sample.objects.get(pk=samples[held + 2])
    assert queue_services.slot_release(sample=taken, reviewer=veteran)
    assert _claim(dataset, veteran, skipped=True) == samples[held + 1]


@pytest.mark.parametrize("held", [3, statements.HEAD + 5])
def test_a_veteran_asking_for_a_sample_gets_it_only_if_they_hold_no_slot_of_it(
    held: int,
) -> None:
    dataset, veteran, samples = _veteran(held)
    assert _claim(dataset, veteran, sample_id=samples[0]) is None
    assert _claim(dataset, veteran, sample_id=samples[-1]) == samples[-1]


def test_a_veteran_of_every_sample_is_served_nothing() -> None:
    dataset, veteran, _ = _veteran(statements.HEAD + 2, extra=0)
    assert _claim(dataset, veteran) is None
