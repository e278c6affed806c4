"""The claim as one PostgreSQL statement: renew the reviewer's lease, or lease the next slot.

``queue._claim_once`` does the same through the ORM in five statements inside a transaction;
on PostgreSQL the plain "next" and "skipped" claims run this single statement instead, in one
round trip and without a transaction of their own (a statement is atomic). Its candidate
subquery (``review.queue_sql``) is the one ``bench/bench_review.py`` measures as the bare-SQL
ceiling: ORDER BY served by the partial index ``slot_claim_order_idx``, and ``FOR UPDATE SKIP
LOCKED`` so that concurrent reviewers never wait on each other.

How it keeps the queue's rules:
- ``held`` renews the reviewer's unfinished slot in the dataset, if any; ``fresh`` looks for a
  new slot only when ``held`` returned nothing (``NOT EXISTS (SELECT 1 FROM held)`` is a one-off
  check PostgreSQL runs before scanning), so a reload or a double click never takes a second
  sample.
- Two concurrent claims by the same reviewer both find no held slot; the second to write trips
  the partial unique index ``uniq_open_lease`` and raises IntegrityError, which the caller
  retries: the retry finds the first claim's lease in ``held``.
- Which slot is claimable is ``review.queue_sql.claim_candidate``, shared with the bench.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple

from django.db import connection, transaction

from review.queue_sql import claim_candidate


class ClaimRow(NamedTuple):
    slot_id: int
    sample_id: int
    expires_at: dt.datetime
    resumed: bool
    gold: bool
    gold_rate: float


_CLAIM = """
WITH conf AS (
    SELECT COALESCE(
        (SELECT lease_seconds FROM review_reviewsettings WHERE dataset_id = %(ds)s),
        %(default_lease)s
    ) * interval '1 second' AS lease,
    -- 0 when the dataset has no gold item: a claim then never looks for one.
    CASE WHEN EXISTS (SELECT 1 FROM review_golditem g WHERE g.dataset_id = %(ds)s)
        THEN COALESCE(
            (SELECT gold_rate FROM review_reviewsettings WHERE dataset_id = %(ds)s),
            %(default_gold_rate)s
        )
        ELSE 0
    END AS gold_rate
),
held AS (
    UPDATE review_slot h SET lease_expires_at = %(now)s + conf.lease
    FROM conf
    WHERE h.dataset_id = %(ds)s AND h.reviewer_id = %(me)s AND NOT h.done
    RETURNING h.id, h.sample_id, h.lease_expires_at, true AS resumed, h.gold
),
fresh AS (
    UPDATE review_slot s SET reviewer_id = %(me)s, leased_at = %(now)s,
        lease_expires_at = %(now)s + conf.lease
    FROM conf
    WHERE s.id = ({candidate}
    )
    RETURNING s.id, s.sample_id, s.lease_expires_at, false AS resumed, false AS gold
)
SELECT id, sample_id, lease_expires_at, resumed, gold, conf.gold_rate FROM held, conf
UNION ALL
SELECT id, sample_id, lease_expires_at, resumed, gold, conf.gold_rate FROM fresh, conf
"""
_GATE = "NOT EXISTS (SELECT 1 FROM held) AND"
CLAIM_NEXT = _CLAIM.format(candidate=claim_candidate(skipped=False, gate=_GATE))
CLAIM_SKIPPED = _CLAIM.format(candidate=claim_candidate(skipped=True, gate=_GATE))


def claim_statement(
    *,
    dataset_id: int,
    reviewer_id: int,
    skipped: bool,
    now: dt.datetime,
    default_lease_seconds: int,
    default_gold_rate: float,
) -> ClaimRow | None:
    """Run the claim; the slot leased (with the dataset's gold rate, read in the same
    statement so that a claim with gold off costs nothing more) or None when nothing is left.

    Raises IntegrityError when a concurrent claim by the same reviewer won the one-open-lease
    constraint (inside a savepoint when the caller is in a transaction, so it can retry).
    """
    params: dict[str, Any] = {
        "ds": dataset_id,
        "me": reviewer_id,
        "now": now,
        "default_lease": default_lease_seconds,
        "default_gold_rate": default_gold_rate,
    }
    sql = CLAIM_SKIPPED if skipped else CLAIM_NEXT
    if connection.get_autocommit():
        return _run(sql, params)
    with transaction.atomic():
        return _run(sql, params)


def _run(sql: str, params: dict[str, Any]) -> ClaimRow | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    slot_id, sample_id, expires_at, resumed, gold, gold_rate = row
    return ClaimRow(
        int(slot_id), int(sample_id), expires_at, bool(resumed), bool(gold), float(gold_rate)
    )
