"""The audit rating queue's claim, written out whole.

Renew the auditor's unfinished lease in the audit set or, when there is none, lease the first
claimable rating slot in the order of the partial index ``audit_lease_claim_idx`` (every item's
first rating before any second one, items in their drawn order) on an item the auditor holds
or rated no slot of, locked ``FOR UPDATE SKIP LOCKED`` (the rules of ``core.leases``). One row
(lease id, expiry, resumed, item id, slot) or none when nothing is left. Parameters by name:
``audit_set``, ``me`` (the auditor), ``now`` and ``lease_seconds``.

``RESERVE`` keeps the slot the auditor's next claim would take (the first claimable one, on
an item they neither hold nor rated) for them while they rate the current item: the slot gets
no auditor and the expiry ``until``, so no claim takes it meanwhile (``judging.audit.ahead``).
One row (lease id, item id) or none. Parameters: ``audit_set``, ``me``, ``now``, ``until``.
"""

from __future__ import annotations

from psycopg import sql

CLAIM = (
    sql.SQL("""
WITH held AS (
    UPDATE {lease} h SET lease_expires_at = %(now)s + %(lease_seconds)s * interval '1 second'
    WHERE h.audit_set_id = %(audit_set)s AND h.auditor_id = %(me)s AND NOT h.done
    RETURNING h.id, h.lease_expires_at, true AS resumed, h.item_id, h.slot
),
fresh AS (
    UPDATE {lease} s
    SET auditor_id = %(me)s, leased_at = %(now)s,
        lease_expires_at = %(now)s + %(lease_seconds)s * interval '1 second'
    WHERE s.id = (
        SELECT c.id FROM {lease} c
        WHERE NOT EXISTS (SELECT 1 FROM held)
          AND c.audit_set_id = %(audit_set)s
          AND NOT c.done
          AND c.lease_expires_at < %(now)s
          AND NOT EXISTS (
              SELECT 1 FROM {lease} m WHERE m.item_id = c.item_id AND m.auditor_id = %(me)s
          )
        ORDER BY c.slot, c.position
        FOR UPDATE SKIP LOCKED
        LIMIT 1
    )
    RETURNING s.id, s.lease_expires_at, false AS resumed, s.item_id, s.slot
)
SELECT * FROM held
UNION ALL
SELECT * FROM fresh
""")
    .format(lease=sql.Identifier("judging_auditlease"))
    .as_string(None)
)

RESERVE = (
    sql.SQL("""
UPDATE {lease} s SET lease_expires_at = %(until)s
WHERE s.id = (
    SELECT c.id FROM {lease} c
    WHERE c.audit_set_id = %(audit_set)s
      AND NOT c.done
      AND c.lease_expires_at < %(now)s
      AND NOT EXISTS (
          SELECT 1 FROM {lease} m WHERE m.item_id = c.item_id AND m.auditor_id = %(me)s
      )
    ORDER BY c.slot, c.position
    FOR UPDATE SKIP LOCKED
    LIMIT 1
)
RETURNING s.id, s.item_id
""")
    .format(lease=sql.Identifier("judging_auditlease"))
    .as_string(None)
)
