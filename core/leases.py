"""Leasing a work queue's slots, shared by the review queue and the audit rating queue.

On PostgreSQL a claim is one statement (``core.lease_sql.claim_sql``, run by
:func:`claim_by_statement`), in one round trip and without a transaction of its own. Elsewhere
(SQLite, the local demo mode, where ``SKIP LOCKED`` is a no-op and the single writer
serialises claims) :meth:`LeaseQueue.claim` keeps the same rules through the ORM inside the
caller's transaction. Either way a claim that lost the one-open-lease race to a concurrent
claim of the same holder raises IntegrityError, and :func:`claim_retrying` runs it again.

What each queue adds stays with it: the review queue's gold items, skips and "this sample"
claims, the audit set's lease duration on the set itself.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.db import IntegrityError, connection, models, transaction
from django.db.models import Exists, OuterRef

from core.lease_sql import CLAIM_ATTEMPTS, OPEN_SINCE, LeaseTable
from core.prepared import hot_cursor

M = TypeVar("M", bound=models.Model)
T = TypeVar("T")


def statement_claims() -> bool:
    """Whether claims run as the one PostgreSQL statement."""
    return connection.vendor == "postgresql"


def claim_retrying(claim: Callable[[], T]) -> T:
    """Run a claim, again when a concurrent claim of the same holder won the one-open-lease
    constraint (the next attempt returns that lease)."""
    for attempt in range(CLAIM_ATTEMPTS):
        try:
            return claim()
        except IntegrityError:
            if attempt == CLAIM_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


def claim_by_statement(sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
    """Run a claim statement and answer its row (None when nothing was leased); inside a
    savepoint when the caller is in a transaction, so that an IntegrityError can be retried."""
    if connection.get_autocommit():
        return _fetch_one(sql, params)
    with transaction.atomic():
        return _fetch_one(sql, params)


def _fetch_one(sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
    with hot_cursor() as cursor:
        cursor.execute(sql, params)
        row: tuple[Any, ...] | None = cursor.fetchone()
    return row


@dataclass(frozen=True)
class LeaseQueue(Generic[M]):
    """A queue's slot model with its lease columns, for the ORM claim and the release."""

    model: type[M]
    table: LeaseTable

    def held(self, *, scope_id: int, holder_id: int) -> models.QuerySet[M]:
        """The holder's open lease in the scope (one row at most), locked."""
        return self.model._default_manager.select_for_update().filter(
            **{self.table.scope: scope_id, self.table.holder: holder_id}, done=False
        )

    def claimable(self, *, scope_id: int, holder_id: int, now: dt.datetime) -> models.QuerySet[M]:
        """The slots the holder may take, in claim order, locked ``SKIP LOCKED``."""
        manager = self.model._default_manager
        mine = manager.filter(
            **{column: OuterRef(column) for column in self.table.unit},
            **{self.table.holder: holder_id},
        )
        return (
            manager.select_for_update(skip_locked=True, of=("self",))
            .filter(**{self.table.scope: scope_id}, done=False, lease_expires_at__lt=now)
            .exclude(Exists(mine))
            .order_by(*self.table.order)
        )

    def claim(
        self,
        *,
        scope_id: int,
        holder_id: int,
        now: dt.datetime,
        expires: dt.datetime,
        columns: Sequence[str],
        narrow: Callable[[models.QuerySet[M]], models.QuerySet[M]] | None = None,
        keep: Callable[[M], bool] | None = None,
        free: Callable[[M], object] | None = None,
    ) -> tuple[M, bool] | None:
        """Inside a transaction: renew the holder's open lease, or lease the first claimable
        slot (``narrow`` filters the candidates, loaded with ``columns`` only); the slot and
        whether it was resumed, or None when nothing is left. A held lease that ``keep``
        refuses is given back by ``free`` (default: :meth:`release`) before looking further.
        """
        held = self.held(scope_id=scope_id, holder_id=holder_id).first()
        if held is not None:
            if keep is None or keep(held):
                self._rows(held.pk).update(lease_expires_at=expires)
                return held, True
            (free or self._release_one)(held)
        candidates = self.claimable(scope_id=scope_id, holder_id=holder_id, now=now)
        slot = (narrow(candidates) if narrow else candidates).only(*columns).first()
        if slot is None:
            return None
        self._rows(slot.pk).update(
            **{self.table.holder: holder_id}, leased_at=now, lease_expires_at=expires
        )
        return slot, False

    def release(self, rows: models.QuerySet[M]) -> int:
        """Give unfinished slots back to the queue; the number given back."""
        return rows.filter(done=False).update(
            **{self.table.holder: None}, leased_at=None, lease_expires_at=OPEN_SINCE
        )

    def _rows(self, pk: int) -> models.QuerySet[M]:
        return self.model._default_manager.filter(pk=pk)

    def _release_one(self, slot: M) -> None:
        self.release(self._rows(slot.pk))
