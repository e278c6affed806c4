"""The auditor's next item reserved ahead: the slot the next claim would take, kept from other
auditors, renewed, taken as the lease once the current rating is in, or given back."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from core import roles
from core.leases import OPEN_SINCE
from judging.audit import ahead, services
from judging.models import AuditItem, AuditLease, AuditSet
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af

pytestmark = pytest.mark.django_db


def _rate(audit_set: AuditSet, auditor: Any, item_id: int) -> None:
    item = AuditItem.objects.select_related("audit_set").get(pk=item_id)
    services.audit_rating_submit(
        auditor=auditor,
        item=item,
        submission_uuid=uuid.uuid4(),
        **af.rubric_for(audit_set.task),
    )


def _second_auditor(audit_set: AuditSet) -> Any:
    other = UserFactory.create(role=roles.AUDITOR)
    af.add_member(audit_set.dataset, other)
    return other


def test_the_reservation_is_the_slot_the_next_claim_would_take(
    audit_set: AuditSet, auditor: Any
) -> None:
    """While the auditor holds the first item, the reservation is the item after it; once the
    rating is in, taking it makes it their lease, which their claim then renews."""
    lease = services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert lease is not None
    reservation = ahead.audit_reserve_ahead(audit_set=audit_set, auditor=auditor)
    assert reservation is not None and reservation.item_id != lease.item_id
    _rate(audit_set, auditor, lease.item_id)
    expected = services.audit_claim(audit_set=audit_set, auditor=_second_auditor(audit_set))
    assert expected is not None and expected.item_id != reservation.item_id  # kept for them
    expires = ahead.audit_take_reserved(
        reservation=reservation, auditor=auditor, lease_seconds=audit_set.lease_seconds
    )
    assert expires is not None and expires > timezone.now()
    again = services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert again is not None and again.resumed and again.item_id == reservation.item_id


def test_no_other_auditor_claims_or_reserves_a_reserved_slot(
    audit_set: AuditSet, auditor: Any
) -> None:
    """Every slot another auditor claims or reserves differs from the reserved one."""
    reservation = ahead.audit_reserve_ahead(audit_set=audit_set, auditor=auditor)
    assert reservation is not None
    other = _second_auditor(audit_set)
    theirs = ahead.audit_reserve_ahead(audit_set=audit_set, auditor=other)
    claimed = services.audit_claim(audit_set=audit_set, auditor=other)
    assert theirs is not None and claimed is not None
    assert reservation.lease_id not in {theirs.lease_id, claimed.lease_id}


def test_a_reservation_is_never_an_item_the_auditor_holds_or_rated(auditor: Any) -> None:
    """With every item rated twice, reserving after each rating never offers the auditor the
    second slot of an item they hold or rated; nothing is left once they rated each item."""
    dataset, _ = af.scoring_dataset(n_samples=4, models=("gpt-4o",))
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=3, double_rating_fraction=1.0)
    seen: set[int] = set()
    while (lease := services.audit_claim(audit_set=audit_set, auditor=auditor)) is not None:
        reservation = ahead.audit_reserve_ahead(audit_set=audit_set, auditor=auditor)
        if reservation is not None:
            assert reservation.item_id != lease.item_id and reservation.item_id not in seen
            ahead.audit_release_reserved(reservation=reservation)
        seen.add(lease.item_id)
        _rate(audit_set, auditor, lease.item_id)
    assert len(seen) == 3
    assert ahead.audit_reserve_ahead(audit_set=audit_set, auditor=auditor) is None


def test_renewing_keeps_the_slot_and_moves_the_expiry(audit_set: AuditSet, auditor: Any) -> None:
    """The previous reservation, still theirs, is renewed (the same slot, a later expiry);
    the old token then names it no longer."""
    now = timezone.now()
    first = ahead.audit_reserve_ahead(audit_set=audit_set, auditor=auditor, now=now)
    assert first is not None
    later = now + dt.timedelta(seconds=30)
    renewed = ahead.audit_reserve_ahead(
        audit_set=audit_set, auditor=auditor, previous=first, now=later
    )
    assert renewed is not None and renewed.lease_id == first.lease_id
    assert renewed.until > first.until
    assert AuditLease.objects.get(pk=first.lease_id).lease_expires_at == renewed.until
    assert not ahead.audit_release_reserved(reservation=first)


def test_taking_waits_for_the_current_rating(audit_set: AuditSet, auditor: Any) -> None:
    """While the auditor still holds their current lease, the reservation cannot become
    theirs (one open lease per audit set); it stays reserved and is taken after the rating."""
    lease = services.audit_claim(audit_set=audit_set, auditor=auditor)
    reservation = ahead.audit_reserve_ahead(audit_set=audit_set, auditor=auditor)
    assert lease is not None and reservation is not None
    seconds = audit_set.lease_seconds
    assert (
        ahead.audit_take_reserved(reservation=reservation, auditor=auditor, lease_seconds=seconds)
        is None
    )
    _rate(audit_set, auditor, lease.item_id)
    assert (
        ahead.audit_take_reserved(reservation=reservation, auditor=auditor, lease_seconds=seconds)
        is not None
    )


def test_an_expired_reservation_taken_by_another_is_gone(audit_set: AuditSet, auditor: Any) -> None:
    """After its expiry the slot is claimable again; once someone else claims it, the token
    takes and releases nothing."""
    past = timezone.now() - dt.timedelta(seconds=ahead.AHEAD_SECONDS + 5)
    reservation = ahead.audit_reserve_ahead(audit_set=audit_set, auditor=auditor, now=past)
    assert reservation is not None
    other = _second_auditor(audit_set)
    claimed = services.audit_claim(audit_set=audit_set, auditor=other)
    assert claimed is not None and claimed.lease_id == reservation.lease_id
    assert (
        ahead.audit_take_reserved(
            reservation=reservation, auditor=auditor, lease_seconds=audit_set.lease_seconds
        )
        is None
    )
    assert not ahead.audit_release_reserved(reservation=reservation)
    assert AuditLease.objects.get(pk=claimed.lease_id).auditor_id == other.pk


def test_releasing_gives_the_slot_back_at_once(audit_set: AuditSet, auditor: Any) -> None:
    """A released reservation is open again: the next auditor's claim takes it."""
    reservation = ahead.audit_reserve_ahead(audit_set=audit_set, auditor=auditor)
    assert reservation is not None
    assert ahead.audit_release_reserved(reservation=reservation)
    assert AuditLease.objects.get(pk=reservation.lease_id).lease_expires_at == OPEN_SINCE
    claimed = services.audit_claim(audit_set=audit_set, auditor=_second_auditor(audit_set))
    assert claimed is not None and claimed.lease_id == reservation.lease_id


def test_a_token_is_only_its_auditors(audit_set: AuditSet, auditor: Any) -> None:
    """Another auditor's token, or a forged one, is refused with a reason."""
    reservation = ahead.audit_reserve_ahead(audit_set=audit_set, auditor=auditor)
    assert reservation is not None
    assert ahead.reservation_read(token=reservation.token, auditor=auditor) == reservation
    other = _second_auditor(audit_set)
    for token in (reservation.token, "not-a-token", reservation.token[:-2]):
        user = other if token == reservation.token else auditor
        with pytest.raises(ValidationError, match="not valid"):
            ahead.reservation_read(token=token, auditor=user)
