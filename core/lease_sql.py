"""The rules and SQL every work queue leases its slots by (review slots, audit rating slots).

Free of Django, so that the benchmark runs the very statements the site runs. A queue keeps
its leases in one table (:class:`LeaseTable`): a row per slot with ``done``, the holder's id,
``leased_at`` and ``lease_expires_at``. A slot nobody holds expires at :data:`OPEN_SINCE`, so
"claimable" is one comparison (``NOT done AND lease_expires_at < now``) that a partial index on
``NOT done`` serves. Expiry is lazy: no sweep frees an expired lease, the next claim takes it
(and its holder may still fill it until then). A holder keeps at most one open lease per
scope, enforced by a partial unique index, and a slot of a unit (a sample's round, an item)
they already hold or filled is never offered to them again.

The claim statement (:func:`claim_sql`) renews the holder's open lease or, when there is none,
leases the first claimable slot in the queue's order, locked ``FOR UPDATE SKIP LOCKED`` so
concurrent claims never wait on each other nor take the same slot; one round trip. Parameters:
``%(scope)s`` the queue (a dataset, an audit set), ``%(me)s`` the holder, ``%(now)s`` the time.

Background jobs (``core.jobs``) hold their rows differently on purpose: a worker claims one
known job by id (no queue order), fences its writes with an attempt number, and keeps its
hold alive with a heartbeat thread, so a sweep must notice dead workers; a queue's lease is a
person's, renewed by their next claim and never swept.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class LeaseTable:
    """Where a queue keeps its slots, by column names (the models' ``attname``\\ s, so that the
    ORM accepts them too).

    ``unit``: the columns of what a holder takes at most one slot of (a sample in a review
    round, an audit item). ``order``: the claim order, Django style (``-column`` descending),
    the order of the table's partial claim index.
    """

    table: str
    scope: str
    holder: str
    unit: tuple[str, ...]
    order: tuple[str, ...]

    def order_sql(self, alias: str) -> str:
        return ", ".join(
            f"{alias}.{term[1:]} DESC" if term.startswith("-") else f"{alias}.{term}"
            for term in self.order
        )


def candidate_sql(leases: LeaseTable, *, where: Sequence[str] = (), gate: str = "") -> str:
    """The id of the first claimable slot for ``%(me)s``, locked with ``SKIP LOCKED``.

    ``where``: the queue's own conditions on the candidate ``c``; ``gate``: a leading
    condition PostgreSQL checks once before scanning (the claim's "holds no lease yet").
    """
    t = leases.table
    mine = " AND ".join(
        [*(f"m.{column} = c.{column}" for column in leases.unit), f"m.{leases.holder} = %(me)s"]
    )
    conditions = [
        *([gate] if gate else []),
        f"c.{leases.scope} = %(scope)s AND NOT c.done AND c.lease_expires_at < %(now)s",
        f"NOT EXISTS (SELECT 1 FROM {t} m WHERE {mine})",  # noqa: S608 - constants, see below
        *where,
    ]
    joined = "\n          AND ".join(conditions)
    return f"""
        SELECT c.id FROM {t} c
        WHERE {joined}
        ORDER BY {leases.order_sql("c")}
        FOR UPDATE SKIP LOCKED
        LIMIT 1"""  # noqa: S608 - names and conditions are the calling modules' constants


def claim_sql(
    leases: LeaseTable,
    *,
    lease_seconds: str = "%(lease_seconds)s",
    where: Sequence[str] = (),
    returning: Sequence[str] = (),
    conf: Mapping[str, str] | None = None,
    conf_from: str = "",
    then: str = "",
) -> str:
    """Renew ``%(me)s``'s open lease in ``%(scope)s``, or lease the next claimable slot.

    Answers one row ``(id, lease_expires_at, resumed, *returning, *conf)``, or none when the
    holder has no lease and nothing is claimable. ``lease_seconds`` is an SQL expression (a
    parameter, or a read of the queue's settings); ``conf`` names more values computed once
    beside it and answered after the slot's columns; ``where`` narrows the candidates.

    ``conf_from``: a FROM clause (with its WHERE) of the one row those values are read from;
    when it yields no row (the holder may not work in the scope), nothing is renewed or
    leased and the statement answers no row. ``then``: a SELECT over the answer row, named
    ``leased``, to answer instead (what the caller reads along with the lease).

    Two concurrent claims by one holder both find no open lease; the second to write trips the
    one-open-lease unique index and raises IntegrityError, and its retry renews the first's.
    """
    t, scope, holder = leases.table, leases.scope, leases.holder
    settings = {"lease": f"{lease_seconds} * interval '1 second'", **(conf or {})}
    conf_sql = ",\n    ".join(f"{value} AS {name}" for name, value in settings.items())
    answers = ", ".join(["id", "lease_expires_at", "resumed", *returning])
    extra = "".join(f", conf.{name}" for name in conf or {})
    gate = "NOT EXISTS (SELECT 1 FROM held)"
    if conf_from:
        gate += " AND EXISTS (SELECT 1 FROM conf)"
    candidate = candidate_sql(leases, where=where, gate=gate)
    held_columns = "".join(f", h.{column}" for column in returning)
    fresh_columns = "".join(f", s.{column}" for column in returning)
    answer = (
        f"SELECT {answers}{extra} FROM held, conf\n"  # noqa: S608 - the modules' constants
        f"UNION ALL\nSELECT {answers}{extra} FROM fresh, conf"
    )
    last = f",\nleased AS (\n{answer}\n)\n{then}" if then else f"\n{answer}"
    return f"""
WITH conf AS (
    SELECT {conf_sql} {conf_from}
),
held AS (
    UPDATE {t} h SET lease_expires_at = %(now)s + conf.lease
    FROM conf
    WHERE h.{scope} = %(scope)s AND h.{holder} = %(me)s AND NOT h.done
    RETURNING h.id, h.lease_expires_at, true AS resumed{held_columns}
),
fresh AS (
    UPDATE {t} s SET {holder} = %(me)s, leased_at = %(now)s,
        lease_expires_at = %(now)s + conf.lease
    FROM conf
    WHERE s.id = ({candidate}
    )
    RETURNING s.id, s.lease_expires_at, false AS resumed{fresh_columns}
){last}
"""  # noqa: S608 - names and conditions are the calling modules' constants
