"""Samples assigned to chosen annotators (review/queue/assignments.py): served to them before
any other sample, reserved for them while one of them can still take them, and anyone's again
once every assignee was served the sample, skipped it, left or lost the annotator role."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError

from annotation import services as annotation_services
from annotation.models import Dataset, Sample
from core import roles
from review.models import Assignment, Slot
from review.queue import ahead
from review.queue import services as queue_services
from review.queue.assignments import assignments_refresh, samples_assign, samples_unassign
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset, submit

pytestmark = pytest.mark.django_db


def _people(n: int) -> list[Any]:
    return [UserFactory.create(role=roles.ANNOTATOR) for _ in range(n)]


def _queue(n: int, people: list[Any], k: int = 2) -> tuple[Dataset, list[Sample]]:
    dataset = review_dataset(n, k=k, members=people)
    return dataset, list(Sample.objects.filter(dataset=dataset).order_by("pk"))


def _claim(dataset: Dataset, user: Any) -> int | None:
    lease = queue_services.slot_claim(dataset=dataset, reviewer=user)
    return None if lease is None else lease.sample_id


def _reserved(sample: Sample) -> set[bool]:
    return set(
        Slot.objects.filter(sample=sample, done=False, gold=False).values_list(
            "reserved", flat=True
        )
    )


def test_an_assignee_is_served_their_samples_before_any_other(lead: Any) -> None:
    """The last sample in queue order, assigned to an annotator, is the first one they get;
    the others' order is the queue's."""
    alice, bob = _people(2)
    dataset, samples = _queue(4, [alice, bob])
    made = samples_assign(
        dataset=dataset, sample_ids=[samples[-1].pk], assignees=[alice.username], by=lead
    )
    assert made == 1 and _reserved(samples[-1]) == {True}
    assert _claim(dataset, alice) == samples[-1].pk
    assert _claim(dataset, bob) == samples[0].pk  # the queue's own order for everyone else


def test_an_assigned_sample_is_nobody_elses_until_its_assignees_were_served_it(lead: Any) -> None:
    """k = 2, assigned to two people: a third annotator is never served it, nor given it when
    they ask for it by id, until both assignees took their slot; a single assignee's sample
    is anyone's once they took theirs (its other slot must go to someone else)."""
    alice, bob, carol = _people(3)
    dataset, samples = _queue(2, [alice, bob, carol])
    both, single = samples
    samples_assign(
        dataset=dataset, sample_ids=[both.pk], assignees=[alice.username, bob.username], by=lead
    )
    samples_assign(dataset=dataset, sample_ids=[single.pk], assignees=[bob.username], by=lead)
    asked = queue_services.slot_claim(dataset=dataset, reviewer=carol, sample_id=both.pk)
    assert asked is None
    assert _claim(dataset, carol) is None  # every sample is reserved for someone else
    assert _claim(dataset, alice) == both.pk
    submit(alice, both)
    assert _claim(dataset, carol) is None and _reserved(both) == {True}  # bob still can
    assert _claim(dataset, bob) in (both.pk, single.pk)
    submit(bob, Sample.objects.get(pk=Slot.objects.get(reviewer=bob, done=False).sample_id))
    assert _claim(dataset, bob) in (both.pk, single.pk)
    submit(bob, Sample.objects.get(pk=Slot.objects.get(reviewer=bob, done=False).sample_id))
    assert _reserved(single) == {False}
    assert _claim(dataset, carol) == single.pk
    assert not Assignment.objects.filter(open=True).exists()


def test_a_sample_of_someone_who_left_or_lost_the_role_is_anyones_again(lead: Any) -> None:
    """Its only assignee losing the annotator role, or leaving the dataset, frees the sample
    at once; the role given back reserves it again."""
    alice, bob = _people(2)
    dataset, [sample] = _queue(1, [alice, bob])
    samples_assign(dataset=dataset, sample_ids=[sample.pk], assignees=[alice.username], by=lead)
    assert _claim(dataset, bob) is None
    annotation_services.dataset_member_set_roles(dataset=dataset, user=alice, roles={roles.AUDITOR})
    assert _reserved(sample) == {False}
    annotation_services.dataset_member_set_roles(
        dataset=dataset, user=alice, roles={roles.ANNOTATOR}
    )
    assert _reserved(sample) == {True}
    annotation_services.dataset_remove_member(dataset=dataset, user=alice)
    assert _claim(dataset, bob) == sample.pk


def test_a_skip_frees_the_sample_and_a_release_gives_it_back(lead: Any) -> None:
    """An assignee who gives their lease back still has the sample reserved; one who skips it
    leaves it to everyone (and is served it among their skipped ones)."""
    alice, bob = _people(2)
    dataset, [sample] = _queue(1, [alice, bob])
    samples_assign(dataset=dataset, sample_ids=[sample.pk], assignees=[alice.username], by=lead)
    assert _claim(dataset, alice) == sample.pk
    assert queue_services.slot_release(sample=sample, reviewer=alice)
    assert _reserved(sample) == {True} and _claim(dataset, bob) is None
    assert _claim(dataset, alice) == sample.pk
    queue_services.slot_skip(sample=sample, reviewer=alice, reason="unsure")
    assert _reserved(sample) == {False}
    assert _claim(dataset, bob) == sample.pk
    lease = queue_services.slot_claim(dataset=dataset, reviewer=alice, skipped=True)
    assert lease is not None and lease.sample_id == sample.pk


def test_unassigned_samples_go_back_to_the_common_queue(lead: Any) -> None:
    """Unassigning from one person keeps the other's reservation; from everyone frees it."""
    alice, bob, carol = _people(3)
    dataset, [sample] = _queue(1, [alice, bob, carol])
    names = [alice.username, bob.username]
    assert samples_assign(dataset=dataset, sample_ids=[sample.pk], assignees=names, by=lead) == 2
    assert samples_assign(dataset=dataset, sample_ids=[sample.pk], assignees=names, by=lead) == 0
    assert samples_unassign(dataset=dataset, sample_ids=[sample.pk], assignees=[bob.username])
    assert _reserved(sample) == {True} and _claim(dataset, carol) is None
    assert samples_unassign(dataset=dataset, sample_ids=[sample.pk]) == 1
    assert _reserved(sample) == {False}
    assert _claim(dataset, carol) == sample.pk


def test_only_annotators_of_the_dataset_can_be_assigned(lead: Any, auditor: Any) -> None:
    """A non-member, a member who only audits, an inactive member, nobody at all: refused,
    naming them, and nothing is assigned."""
    alice, stranger, gone = _people(3)
    dataset, [sample] = _queue(1, [alice, gone])
    annotation_services.dataset_add_member(dataset=dataset, user=auditor, roles={roles.AUDITOR})
    gone.is_active = False
    gone.save()
    for name in (stranger.username, auditor.username, gone.username):
        with pytest.raises(ValidationError) as refused:
            samples_assign(
                dataset=dataset, sample_ids=[sample.pk], assignees=[alice.username, name], by=lead
            )
        message = " ".join(refused.value.messages)
        assert f"Not an annotator of this dataset: {name}." in message
    with pytest.raises(ValidationError, match="at least one"):
        samples_assign(dataset=dataset, sample_ids=[sample.pk], assignees=[" "], by=lead)
    assert not Assignment.objects.exists()


def test_a_reservation_taken_ahead_closes_the_assignment(lead: Any) -> None:
    """The workbench's next sample, reserved ahead and then taken, is the assigned one, and
    taking it serves it as a claim does."""
    alice, bob = _people(2)
    dataset, samples = _queue(3, [alice, bob], k=1)
    samples_assign(dataset=dataset, sample_ids=[samples[2].pk], assignees=[alice.username], by=lead)
    reservation = ahead.slot_reserve_ahead(dataset=dataset, reviewer=alice)
    assert reservation is not None and reservation.sample_id == samples[2].pk
    read = ahead.reservation_read(token=reservation.token, reviewer=alice)
    assert read.assigned
    assert ahead.slot_take_reserved(reservation=read, reviewer=alice) is not None
    assert not Assignment.objects.get().open


def test_a_refresh_repairs_a_sample_left_reserved_by_two_claims_at_once(lead: Any) -> None:
    """Two assignees served at the same instant each see the other's assignment still open
    and leave the sample reserved; the queue's refresh (any sync) frees it."""
    alice, bob, carol = _people(3)
    dataset, [sample] = _queue(1, [alice, bob, carol], k=3)
    samples_assign(
        dataset=dataset, sample_ids=[sample.pk], assignees=[alice.username, bob.username], by=lead
    )
    assert _claim(dataset, alice) == sample.pk
    assert _claim(dataset, bob) == sample.pk
    # Served at the same instant, each claim leaves the sample reserved for the other.
    Slot.objects.filter(sample=sample, reviewer=None).update(reserved=True)
    assert _claim(dataset, carol) is None
    assignments_refresh(dataset_id=dataset.pk)
    assert _claim(dataset, carol) == sample.pk
