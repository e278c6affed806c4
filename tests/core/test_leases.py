"""Tests for core.leases: the retry of a claim that lost a race, the statement's savepoint, and
the lease rules as a queue's claim keeps them. The audit rating queue stands in for every
queue here (the review queue's claim has its own tests in tests/review)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from core import leases
from core.leases import CLAIM_ATTEMPTS
from judging.audit import services as audit_services
from judging.models import AuditLease, AuditSet
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af


def test_a_claim_that_lost_the_race_is_run_again_until_it_wins() -> None:
    """IntegrityError (a concurrent claim of the same holder won) runs the claim again."""
    calls: list[int] = []

    def claim() -> str:
        calls.append(1)
        if len(calls) < CLAIM_ATTEMPTS:
            raise IntegrityError("uniq_open_lease")
        return "lease"

    assert leases.claim_retrying(claim) == "lease"
    assert len(calls) == CLAIM_ATTEMPTS


def test_a_claim_that_keeps_losing_raises_after_its_attempts() -> None:
    """The last attempt's IntegrityError reaches the caller; other errors are not retried."""
    calls: list[int] = []

    def losing() -> None:
        calls.append(1)
        raise IntegrityError("uniq_open_lease")

    with pytest.raises(IntegrityError):
        leases.claim_retrying(losing)
    assert len(calls) == CLAIM_ATTEMPTS

    def broken() -> None:
        calls.append(1)
        raise ValueError

    with pytest.raises(ValueError):
        leases.claim_retrying(broken)
    assert len(calls) == CLAIM_ATTEMPTS + 1


@pytest.mark.django_db
def test_a_statement_that_fails_inside_a_transaction_leaves_it_usable() -> None:
    """In the caller's transaction the statement runs in a savepoint, so a lost race can be
    retried in the same transaction; a statement answering no row gives None."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE lease_once (id int PRIMARY KEY)")
    insert = "INSERT INTO lease_once VALUES (%(id)s) RETURNING id"
    with transaction.atomic():
        assert leases.claim_row(insert, {"id": 1}) == (1,)
        with pytest.raises(IntegrityError):
            leases.claim_row(insert, {"id": 1})
        assert leases.claim_row(insert, {"id": 2}) == (2,)
        assert leases.claim_row("SELECT 1 WHERE %(no)s", {"no": False}) is None


def _claim_order(
    audit_set: AuditSet, auditors: list[Any], now: dt.datetime
) -> list[tuple[int, int, int, bool]]:
    """Auditors in turn claim twice (the second renews) and fill their slot, until nothing is
    left: (auditor, item position, slot, resumed) of every claim."""
    order: list[tuple[int, int, int, bool]] = []
    while True:
        taken = 0
        for index, auditor in enumerate(auditors):
            for _ in range(2):
                lease = audit_services.audit_claim(audit_set=audit_set, auditor=auditor, now=now)
                if lease is None:
                    break
                position = AuditLease.objects.get(pk=lease.lease_id).position
                order.append((index, position, lease.slot, lease.resumed))
            if lease is not None:
                AuditLease.objects.filter(pk=lease.lease_id).update(done=True)
                taken += 1
        if not taken:
            return order


@pytest.mark.django_db
def test_the_claim_keeps_the_queue_order_and_never_gives_an_auditor_two_slots_of_an_item() -> None:
    """Auditors in turn claim (the second claim renews the lease) and fill their slot: each
    fresh claim takes the first open slot in (slot, drawn position) order whose item the
    auditor has no slot of, as a model of the rule computes it, and every slot is taken."""
    dataset, _ = af.scoring_dataset(n_samples=12)
    audit_set = af.draw(dataset, size=8, double_rating_fraction=0.5)
    auditors = [UserFactory.create() for _ in range(3)]
    slots = sorted(
        AuditLease.objects.filter(audit_set=audit_set).values_list("slot", "position", "item_id")
    )
    order = _claim_order(audit_set, auditors, timezone.now())
    assert all(resumed for *_rest, resumed in order[1::2])
    expected: list[tuple[int, int, int, bool]] = []
    left = list(slots)
    rated: dict[int, set[int]] = {index: set() for index in range(len(auditors))}
    while left:
        taken = 0
        for index in range(len(auditors)):
            pick = next((s for s in left if s[2] not in rated[index]), None)
            if pick is not None:
                left.remove(pick)
                rated[index].add(pick[2])
                expected.append((index, pick[1], pick[0], False))
                taken += 1
        assert taken, "the model of the rule got stuck"
    assert order[0::2] == expected


@pytest.mark.django_db
def test_release_gives_back_only_unfinished_slots() -> None:
    """A released slot is open again (no holder, claimable at once); a filled one stays."""
    dataset, _ = af.scoring_dataset(n_samples=4)
    audit_set = af.draw(dataset, size=2, double_rating_fraction=0)
    auditor, other, third = (UserFactory.create() for _ in range(3))
    lease = audit_services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert lease is not None
    AuditLease.objects.exclude(pk=lease.lease_id).update(auditor=other, done=True)
    assert audit_services.audit_release(audit_set=audit_set, auditor=auditor)
    assert not audit_services.audit_release(audit_set=audit_set, auditor=other)
    assert AuditLease.objects.filter(audit_set=audit_set, auditor=other, done=True).count() == 1
    taken = audit_services.audit_claim(audit_set=audit_set, auditor=third)
    assert taken is not None and taken.lease_id == lease.lease_id
