"""Reservations of the next sample (review.queue.ahead): nobody else takes a reserved
slot, the reviewer takes it as their lease once their current one is done, renews or gives
it back, and a token is theirs alone."""

from __future__ import annotations

import datetime as dt
import random
import uuid
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.models import Sample, SampleStatus
from review import services
from review.gold import services as gold
from review.models import Slot
from review.queue import ahead
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory, mmooc_sample
from tests.review.factories import review_dataset, submit

pytestmark = pytest.mark.django_db


def _reviewer(dataset: Any) -> Any:
    from annotation import services as annotation_services

    user = UserFactory.create(role="annotator")
    annotation_services.dataset_add_member(dataset=dataset, user=user)
    return user


def _holding_and_reserving() -> tuple[Any, Any, Any, ahead.Reservation]:
    """Two samples, k = 1: "me" holds one and reserved the other; "other" is a reviewer too."""
    dataset = review_dataset(2, k=1)
    me, other = _reviewer(dataset), _reviewer(dataset)
    queue_services.slot_claim(dataset=dataset, reviewer=me)
    reserved = ahead.slot_reserve_ahead(dataset=dataset, reviewer=me)
    assert reserved is not None
    return dataset, me, other, reserved


def test_the_reservation_is_the_next_sample_and_nobody_else_claims_it() -> None:
    """With k = 1, the sample reserved for me is neither the one I hold nor one another
    reviewer's claim gets; once my review is in I take it as my lease."""
    dataset = review_dataset(3, k=1)
    me, other = _reviewer(dataset), _reviewer(dataset)
    held = queue_services.slot_claim(dataset=dataset, reviewer=me)
    assert held is not None
    reserved = ahead.slot_reserve_ahead(dataset=dataset, reviewer=me)
    assert reserved is not None and reserved.sample_id != held.sample_id
    theirs = queue_services.slot_claim(dataset=dataset, reviewer=other)
    assert theirs is not None and theirs.sample_id not in (held.sample_id, reserved.sample_id)

    assert ahead.slot_take_reserved(reservation=reserved, reviewer=me) is None  # A still open
    submit(me, Sample.objects.get(pk=held.sample_id))
    assert ahead.slot_take_reserved(reservation=reserved, reviewer=me) is not None
    slot = Slot.objects.get(pk=reserved.slot_id)
    assert (slot.reviewer_id, slot.done) == (me.pk, False)
    again = queue_services.slot_claim(dataset=dataset, reviewer=me)
    assert again is not None and again.resumed and again.sample_id == reserved.sample_id


def test_renewing_keeps_the_sample_and_releasing_gives_it_back() -> None:
    """A renewal extends the same reservation; a release opens the slot to the queue at once,
    and the old token then matches nothing."""
    dataset = review_dataset(2, k=1)
    me, other = _reviewer(dataset), _reviewer(dataset)
    queue_services.slot_claim(dataset=dataset, reviewer=me)
    first = ahead.slot_reserve_ahead(dataset=dataset, reviewer=me)
    assert first is not None
    later = timezone.now() + dt.timedelta(seconds=30)
    renewed = ahead.slot_reserve_ahead(dataset=dataset, reviewer=me, previous=first, now=later)
    assert renewed is not None and renewed.slot_id == first.slot_id
    assert renewed.until > first.until
    assert not ahead.slot_release_reserved(reservation=first)  # the renewal replaced it
    assert ahead.slot_release_reserved(reservation=renewed)
    theirs = queue_services.slot_claim(dataset=dataset, reviewer=other)
    assert theirs is not None and theirs.slot_id == first.slot_id
    assert ahead.slot_take_reserved(reservation=renewed, reviewer=me) is None


def test_an_expired_reservation_goes_back_to_the_queue() -> None:
    """Unused, a reservation lapses after AHEAD_SECONDS and anyone's claim may take it."""
    dataset, _me, other, reserved = _holding_and_reserving()
    assert queue_services.slot_claim(dataset=dataset, reviewer=other) is None
    later = timezone.now() + dt.timedelta(seconds=ahead.AHEAD_SECONDS + 1)
    theirs = queue_services.slot_claim(dataset=dataset, reviewer=other, now=later)
    assert theirs is not None and theirs.slot_id == reserved.slot_id


def test_nothing_left_reserves_nothing() -> None:
    """A reviewer whose current sample is the last one for them gets no reservation."""
    dataset = review_dataset(1, k=2)
    me = _reviewer(dataset)
    queue_services.slot_claim(dataset=dataset, reviewer=me)
    assert ahead.slot_reserve_ahead(dataset=dataset, reviewer=me) is None


def test_a_token_is_its_reviewers_alone() -> None:
    """Another reviewer's token, or a tampered one, is refused with a message."""
    _dataset, me, other, reserved = _holding_and_reserving()
    assert ahead.reservation_read(token=reserved.token, reviewer=me) == reserved
    for token, user in ((reserved.token, other), (reserved.token + "x", me), ("", me)):
        with pytest.raises(ValidationError, match="not valid"):
            ahead.reservation_read(token=token, reviewer=user)


def test_a_gold_item_is_drawn_at_the_reservation_and_deleted_when_unused() -> None:
    """When the gold rate's draw says so, the reservation is a gold slot of a verified gold
    item; released unused, that slot is deleted, so the reviewer may be served it later."""
    dataset = review_dataset(3, k=1)
    me = _reviewer(dataset)
    gold_sample = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    gold.gold_mark(sample=Sample.objects.select_related("dataset").get(pk=gold_sample.pk), by=None)
    queue_services.review_settings_update(
        dataset=dataset, overlap=1, blind=True, show_judge_hints=False, lease_seconds=900,
        gold_rate=0.5,
    )  # fmt: skip
    queue_services.slot_claim(dataset=dataset, reviewer=me, rng=_Draw(0.9))
    reserved = ahead.slot_reserve_ahead(dataset=dataset, reviewer=me, rng=_Draw(0.0))
    assert reserved is not None and reserved.gold and reserved.sample_id == gold_sample.pk
    assert ahead.slot_release_reserved(reservation=reserved)
    assert not Slot.objects.filter(pk=reserved.slot_id).exists()
    fresh = ahead.slot_reserve_ahead(dataset=dataset, reviewer=me, rng=_Draw(0.9))
    assert fresh is not None and not fresh.gold


class _Draw(random.Random):
    """A draw that always gives ``value`` and picks the first candidate."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value

    def choice(self, seq: Any) -> Any:
        return seq[0]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_reviewers_working_ahead_at_once_keep_the_queue_invariants() -> None:
    """8 reviewers at once, each reserving the next sample while holding one, submitting and
    taking the reservation (claiming as usual when it is gone): every sample ends with its k
    reviews, none over k, nobody reviews a sample twice, and no slot is left open; a
    reservation taken is the lease the reviewer's next claim resumes."""
    from django.db.models import Count

    from review.models import Review
    from tests.support.threads import run_threads

    k, n_samples, workers = 2, 24, 8
    dataset = review_dataset(n_samples, k=k)
    reviewers = [_reviewer(dataset) for _ in range(workers)]

    def work(index: int) -> None:
        me = reviewers[index]
        lease = queue_services.slot_claim(dataset=dataset, reviewer=me)
        while lease is not None:
            reserved = ahead.slot_reserve_ahead(dataset=dataset, reviewer=me)
            sample = Sample.objects.select_related("dataset").get(pk=lease.sample_id)
            services.review_submit(
                reviewer=me, sample=sample, client_uuid=uuid.uuid4(), decision="accept"
            )
            if reserved is not None and not ahead.slot_take_reserved(
                reservation=reserved, reviewer=me
            ):
                ahead.slot_release_reserved(reservation=reserved)  # as the page does
                reserved = None
            lease = queue_services.slot_claim(dataset=dataset, reviewer=me)
            assert reserved is None or (lease is not None and lease.sample_id == reserved.sample_id)

    assert run_threads(workers, work) == []
    per_sample = Review.objects.values("sample").annotate(n=Count("id"))
    assert sorted(row["n"] for row in per_sample) == [k] * n_samples
    twice = Review.objects.values("sample", "reviewer").annotate(n=Count("id")).filter(n__gt=1)
    assert not twice.exists()
    assert not Slot.objects.filter(dataset=dataset, done=False).exists()
