"""Tests for core.leases: the retry of a claim that lost a race, the statement's savepoint, and
the ORM claim keeping the statement's rules. The audit rating queue stands in for every
queue (the review queue runs both ways in tests/review through its ``claim_way`` fixture)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from core import leases
from core.lease_sql import CLAIM_ATTEMPTS
from judging.audit import services as audit_services
from judging.audit.services import AUDIT_QUEUE
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


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_statement_that_fails_inside_a_transaction_leaves_it_usable() -> None:
    """In the caller's transaction the statement runs in a savepoint, so a lost race can be
    retried in the same transaction; a statement answering no row gives None."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE lease_once (id int PRIMARY KEY)")
    insert = "INSERT INTO lease_once VALUES (%(id)s) RETURNING id"
    with transaction.atomic():
        assert leases.claim_by_statement(insert, {"id": 1}) == (1,)
        with pytest.raises(IntegrityError):
            leases.claim_by_statement(insert, {"id": 1})
        assert leases.claim_by_statement(insert, {"id": 2}) == (2,)
        assert leases.claim_by_statement("SELECT 1 WHERE %(no)s", {"no": False}) is None


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


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_orm_claim_leases_what_the_statement_leases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two audit sets drawn alike, one claimed through the ORM (SQLite's way) and one by the
    statement (PostgreSQL's): the same slots in the same order, renewed alike, and never
    two slots of one item to one auditor."""
    dataset, _ = af.scoring_dataset(n_samples=12)
    by_orm, by_statement = (af.draw(dataset, size=8, double_rating_fraction=0.5) for _ in "ab")
    auditors = [UserFactory.create() for _ in range(3)]
    now = timezone.now()
    statement_order = _claim_order(by_statement, auditors, now)
    monkeypatch.setattr(audit_services, "statement_claims", lambda: False)
    orm_order = _claim_order(by_orm, auditors, now)
    assert orm_order == statement_order
    assert len(statement_order) == 2 * AuditLease.objects.filter(audit_set=by_orm).count()
    fresh = [(auditor, position) for auditor, position, _slot, resumed in orm_order if not resumed]
    assert len(fresh) == len(set(fresh))


@pytest.mark.django_db
def test_a_held_lease_the_claim_does_not_keep_is_freed_before_the_next_is_taken() -> None:
    """``keep`` refusing the held lease gives it back (here by the default release), so the
    holder ends with one open lease, the one just taken."""
    dataset, _ = af.scoring_dataset(n_samples=4)
    audit_set = af.draw(dataset, size=3, double_rating_fraction=0)
    auditor = UserFactory.create()
    now = timezone.now()
    first = audit_services.audit_claim(audit_set=audit_set, auditor=auditor, now=now)
    assert first is not None
    with transaction.atomic():
        claimed = AUDIT_QUEUE.claim(
            scope_id=audit_set.pk,
            holder_id=auditor.pk,
            now=now,
            expires=now + dt.timedelta(minutes=5),
            columns=("id", "item_id"),
            narrow=lambda candidates: candidates.exclude(pk=first.lease_id),
            keep=lambda held: False,
        )
    assert claimed is not None
    slot, resumed = claimed
    assert not resumed and slot.pk != first.lease_id
    assert list(AuditLease.objects.filter(auditor=auditor).values_list("pk", flat=True)) == [
        slot.pk
    ]


@pytest.mark.django_db
def test_release_gives_back_only_unfinished_slots() -> None:
    """A released slot is open again (no holder, claimable at once); a filled one stays."""
    dataset, _ = af.scoring_dataset(n_samples=4)
    audit_set = af.draw(dataset, size=2, double_rating_fraction=0)
    auditor, other, third = (UserFactory.create() for _ in range(3))
    lease = audit_services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert lease is not None
    AuditLease.objects.exclude(pk=lease.lease_id).update(auditor=other, done=True)
    assert AUDIT_QUEUE.release(AuditLease.objects.filter(audit_set=audit_set)) == 1
    assert AuditLease.objects.filter(audit_set=audit_set, auditor=other, done=True).count() == 1
    taken = audit_services.audit_claim(audit_set=audit_set, auditor=third)
    assert taken is not None and taken.lease_id == lease.lease_id
