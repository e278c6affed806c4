"""The lease rules every work queue keeps (review slots, audit rating slots), and running a
queue's claim statement.

A queue keeps its leases in one table: a row per slot with ``done``, the holder's id,
``leased_at`` and ``lease_expires_at``. A slot nobody holds expires at :data:`OPEN_SINCE`, so
"claimable" is one comparison (``NOT done AND lease_expires_at < now``) that a partial index on
``NOT done`` serves. Expiry is lazy: no sweep frees an expired lease, the next claim takes it
(and its holder may still fill it until then). A holder keeps at most one open lease per
queue, enforced by a partial unique index, and a slot of a unit (a sample's round, an item)
they already hold or filled is never offered to them again.

Each queue writes its claim statement out whole in its own module (``review.queue.statements``,
``judging.audit.statements``): renew the holder's open lease or, when there is none, lease the
first claimable slot in the queue's order, locked ``FOR UPDATE SKIP LOCKED``; one round trip.
Two concurrent claims by one holder both find no open lease; the second to write trips the
one-open-lease index and raises IntegrityError, and :func:`claim_retrying` runs it again: the
retry renews the first one's lease.

Background jobs (``core.jobs``) hold their rows differently on purpose: a worker claims one
known job by id (no queue order), fences its writes with an attempt number, and keeps its
hold alive with a heartbeat thread, so a sweep must notice dead workers; a queue's lease is a
person's, renewed by their next claim and never swept.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from django.db import IntegrityError, connection, transaction

T = TypeVar("T")

# The lease expiry of a slot nobody holds: long past, so "claimable" is one comparison.
OPEN_SINCE = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
DEFAULT_LEASE_SECONDS = 15 * 60
MIN_LEASE_SECONDS = 30
MAX_LEASE_SECONDS = 7 * 24 * 3600
# Claims retried after losing the one-open-lease race to a concurrent claim of the same holder.
CLAIM_ATTEMPTS = 3


def lease_expiry(now: dt.datetime, seconds: int) -> dt.datetime:
    """When a lease taken or renewed at ``now`` for ``seconds`` ends."""
    return now + dt.timedelta(seconds=seconds)


def lease_seconds_valid(seconds: int) -> bool:
    """A lease lasts between 30 seconds and a week."""
    return MIN_LEASE_SECONDS <= seconds <= MAX_LEASE_SECONDS


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


def claim_row(statement: str, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """Run a claim statement and answer its row (None when nothing was leased); inside a
    savepoint when the caller is in a transaction, so that an IntegrityError can be retried."""
    if connection.get_autocommit():
        return _fetch_one(statement, params)
    with transaction.atomic():
        return _fetch_one(statement, params)


def _fetch_one(statement: str, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        row: tuple[Any, ...] | None = cursor.fetchone()
    return row
