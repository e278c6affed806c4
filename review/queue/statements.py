"""The review queue's statements, each written out whole: the claim and the reservation ahead.

Both take the next claimable slot for a reviewer in the same way (:data:`NEXT_SLOT`): not
done, its lease expired (or never given), not a gold slot, on a sample the reviewer holds no
slot of in that review round, skipped by them or not as asked, first in the order of the
partial index ``slot_claim_order_idx`` (judge disagreements first, then priority, then import
order), locked ``FOR UPDATE SKIP LOCKED`` so that concurrent claims never wait on each other
nor take the same slot. A slot nobody holds expires at ``core.leases.OPEN_SINCE``, so
"claimable" is one comparison. ``%(sample)s`` (NULL for "the next one") asks for the slot of
one sample instead, whatever the reviewer skipped.

A reviewer's claim walks past the open slots of every sample they already hold a slot of (the
other k - 1 slots of the samples they reviewed come first in the order), so that walk must
cost next to nothing per slot, and nothing for the history it does not meet. The head of the
walk comes first: the queue's first :data:`HEAD` candidates, read from ``slot_claim_order_idx``
alone (an index-only scan: it carries every column they are tested on) under a ``LIMIT`` of
their own, each tested by one probe of ``slot_reviewer_history_idx`` (``NOT EXISTS``: has the
reviewer a slot of its sample in its round? a slot's dataset is its sample's) and one of the
skips' unique index, so that a claim that finds its slot there costs the same for a reviewer
of 10,000 reviews as for a new one. Only when none of them will do (the reviewer is more than
:data:`HEAD` slots ahead of everyone else) does the walk of the whole queue run: the same
candidates, each tested against a hash of the reviewer's (sample, round) pairs in the dataset,
built once per claim from ``slot_reviewer_history_idx`` (``NOT IN``, the same as ``NOT EXISTS``
on these never-NULL columns, and far cheaper than a probe per slot when thousands are passed
over), and against a hash of the samples they skipped (``IN``, uncorrelated like the first, so
that neither is a subquery run again for every slot passed over). That walk's cost grows with
the slots passed over, which are the reviewer's own samples' other slots: no order of the
queue's index can leave them out for one reviewer (``docs/performance.md``, "The veteran's
claim, second round").

Only a candidate that passes is read from the table, by the ``EXISTS`` that locks it (``SKIP
LOCKED``) and tests it again on the row it locked, so that a slot taken meanwhile by a committed
claim is passed over. The candidates are an ordered subquery of their own (which the planner
keeps apart, and into which it pushes no test holding a subquery, so that the lock is tried
last) under a level with nothing but that test and ``LIMIT 1``, so that the planner plans them
for the first row, in index order, and rows leave them in that order: a lock at the
candidates' own level would need their ctid, which an index-only scan does not give, and a
join beside them would have them planned for every row (a sort of the whole queue at 1,000,000
samples). A nested-loop anti join over the reviewer's slots, as before, cost 80 ms for a
reviewer with 10,000 reviews (``docs/performance.md``).

Samples assigned to chosen annotators (``review.queue.assignments``) come first: the candidates
are the slots of the reviewer's open assignments (``assignment_open_idx``: an assignment stays
open only until its assignee is served its sample, so this costs an index probe or two, and
the reviewer's history is probed for each, as at the head of the walk), then, ``UNION ALL``
(an Append, which runs its arms in turn, and this statement is never run in parallel: it
writes), the head of the walk of every other slot, then the walk itself. Each arm is the
ordered candidates, the lock and ``LIMIT 1`` of its own, as above: under one ``LIMIT`` above
them all, the planner counted on the first arm for the row and planned the walk for every row
(a generic plan sorted the whole queue, 234 ms a claim at 41,883 samples). The walk keeps out
of reserved slots (a sample with an open assignment is its assignees' only) as one more column
of ``slot_claim_order_idx``, second after the dataset, so that the walk is the index's range
of unreserved slots and passes over no reserved one. Serving a slot closes the reviewer's
assignment of its sample and, when no other one is open, frees the sample's other slots, in the
claim's own statement (``closed``, ``unreserved``); it answers whether it closed one
(``assigned``), so that a gold item swapped in for it can reopen it.

The claim (:data:`CLAIM`) renews the reviewer's unfinished lease in the dataset, if they hold
one (on the sample asked for, when one is), or leases the next slot: one statement, one round
trip, atomic without a transaction of its own. Two concurrent claims of one reviewer both find
no lease held; the second to write trips the partial unique index ``uniq_open_lease`` and
raises IntegrityError, and its retry renews the first one's lease (``core.leases``). It leases
nothing in a dataset the reviewer may not review in (annotation's SQL function
``annotation_dataset_visible`` with the annotator role) and answers, with the lease, the
dataset's gold rate (0 when the dataset has no gold item, so that a claim with gold off looks
for none) and the leased sample's card (``annotation_sample_card``).

Plain text and psycopg, with no Django, so that ``bench/bench_review.py`` times the very
statements the site runs. Parameters, by name: ``dataset``, ``me`` (the reviewer), ``lead``
(whether they are a lead), ``now``, ``skipped``, ``sample``, ``default_lease`` (seconds) and
``default_gold_rate`` (for a dataset without review settings); the reservation takes
``until`` instead of the lease and gold parameters.
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

_TABLES = {
    "slot": sql.Identifier("review_slot"),
    "skip": sql.Identifier("review_skip"),
    "settings": sql.Identifier("review_reviewsettings"),
    "gold_item": sql.Identifier("review_golditem"),
    "assignment": sql.Identifier("review_assignment"),
}

# A candidate of :data:`NEXT_SLOT` (``{candidate}``) locked, and still claimable on the row it
# locked.
_LOCKED = sql.SQL("""EXISTS (
            SELECT 1 FROM {slot} s
            WHERE s.id = {candidate}.id
              AND NOT s.done AND s.lease_expires_at < %(now)s AND NOT s.gold
            FOR UPDATE SKIP LOCKED
        )""")

# How many of the queue's first candidates the head of the walk probes one by one before the
# walk of the whole queue (with the reviewer's history hashed) takes over: :data:`NEXT_SLOT`.
HEAD = 64

# A candidate ``{candidate}`` (its sample and round) on a sample the reviewer holds no slot of
# in that round: one probe of ``slot_reviewer_history_idx``.
_NOT_HELD = sql.SQL("""NOT EXISTS (
            SELECT 1 FROM {slot} m
            WHERE m.reviewer_id = %(me)s AND m.dataset_id = %(dataset)s
              AND m.sample_id = {candidate}.sample_id AND m.round = {candidate}.round
        )""")

# The claimable slots of the dataset outside reserved ones (and only the sample asked for, when
# one is), by the order of ``slot_claim_order_idx``: the columns of the walk's candidates.
_CLAIMABLE = sql.SQL("""c.dataset_id = %(dataset)s
                  AND NOT c.reserved
                  AND NOT c.done
                  AND c.lease_expires_at < %(now)s
                  AND NOT c.gold
                  AND (%(sample)s::bigint IS NULL OR c.sample_id = %(sample)s::bigint)""")

_ORDER = sql.SQL(
    "{t}.reserved, {t}.judges_disagree DESC, {t}.priority DESC, {t}.sample_id, {t}.position"
)

NEXT_SLOT = sql.SQL("""
    SELECT next.id FROM (
        (
            SELECT mine.id FROM (
                SELECT c.id FROM {assignment} a
                JOIN {slot} c ON c.sample_id = a.sample_id
                WHERE a.reviewer_id = %(me)s
                  AND a.dataset_id = %(dataset)s
                  AND a.open
                  AND (
                      a.sample_id = %(sample)s::bigint
                      OR (%(sample)s::bigint IS NULL AND NOT %(skipped)s)
                  )
                  AND NOT c.done
                  AND c.lease_expires_at < %(now)s
                  AND NOT c.gold
                  AND {not_held_c}
                ORDER BY a.sample_id
            ) mine
            WHERE {locked_mine}
            LIMIT 1
        )
        UNION ALL
        (
            SELECT head.id FROM (
                SELECT front.id FROM (
                    SELECT c.id, c.sample_id, c.round, c.reserved, c.judges_disagree,
                           c.priority, c.position
                    FROM {slot} c
                    WHERE {claimable}
                    ORDER BY {order_c}
                    LIMIT {head}
                ) front
                WHERE {not_held_front}
                  AND (
                      %(sample)s::bigint IS NOT NULL
                      OR %(skipped)s = EXISTS (
                          SELECT 1 FROM {skip} k
                          WHERE k.reviewer_id = %(me)s AND k.sample_id = front.sample_id
                      )
                  )
                ORDER BY {order_front}
            ) head
            WHERE {locked_head}
            LIMIT 1
        )
        UNION ALL
        (
            SELECT walk.id FROM (
                SELECT c.id FROM {slot} c
                WHERE {claimable}
                  AND (c.sample_id, c.round) NOT IN (
                      SELECT m.sample_id, m.round FROM {slot} m
                      WHERE m.reviewer_id = %(me)s AND m.dataset_id = %(dataset)s
                  )
                  AND (
                      %(sample)s::bigint IS NOT NULL
                      OR %(skipped)s = (
                          c.sample_id IN (
                              SELECT k.sample_id FROM {skip} k WHERE k.reviewer_id = %(me)s
                          )
                      )
                  )
                ORDER BY {order_c}
            ) walk
            WHERE {locked_walk}
            LIMIT 1
        )
    ) next
    LIMIT 1""").format(
    claimable=_CLAIMABLE,
    head=sql.Literal(HEAD),
    order_c=_ORDER.format(t=sql.Identifier("c")),
    order_front=_ORDER.format(t=sql.Identifier("front")),
    not_held_c=_NOT_HELD.format(candidate=sql.Identifier("c"), **_TABLES),
    not_held_front=_NOT_HELD.format(candidate=sql.Identifier("front"), **_TABLES),
    locked_mine=_LOCKED.format(candidate=sql.Identifier("mine"), **_TABLES),
    locked_head=_LOCKED.format(candidate=sql.Identifier("head"), **_TABLES),
    locked_walk=_LOCKED.format(candidate=sql.Identifier("walk"), **_TABLES),
    **_TABLES,
)

# Whether the sample ``{sample}`` has an open assignment besides the reviewer's own: serving
# them a slot of it leaves it reserved for those others only then.
_OTHERS_OPEN = sql.SQL("""EXISTS (
            SELECT 1 FROM {assignment} o
            WHERE o.sample_id = {sample} AND o.open AND o.reviewer_id <> %(me)s
        )""")


def _text(statement: sql.Composable) -> str:
    return statement.as_string(None)


CLAIM = _text(
    sql.SQL("""
WITH conf AS (
    SELECT
        COALESCE(
            (SELECT rs.lease_seconds FROM {settings} rs WHERE rs.dataset_id = %(dataset)s),
            %(default_lease)s
        ) * interval '1 second' AS lease,
        CASE WHEN EXISTS (SELECT 1 FROM {gold_item} g WHERE g.dataset_id = %(dataset)s)
            THEN COALESCE(
                (SELECT rs.gold_rate FROM {settings} rs WHERE rs.dataset_id = %(dataset)s),
                %(default_gold_rate)s
            )
            ELSE 0
        END AS gold_rate
    WHERE annotation_dataset_visible(%(dataset)s, %(me)s, %(lead)s, 'annotator')
),
held AS (
    UPDATE {slot} h SET lease_expires_at = %(now)s + conf.lease
    FROM conf
    WHERE h.dataset_id = %(dataset)s
      AND h.reviewer_id = %(me)s
      AND NOT h.done
      AND (%(sample)s::bigint IS NULL OR h.sample_id = %(sample)s::bigint)
    RETURNING h.id, h.sample_id, h.lease_expires_at, true AS resumed, h.gold
),
fresh AS (
    UPDATE {slot} s
    SET reviewer_id = %(me)s, leased_at = %(now)s, lease_expires_at = %(now)s + conf.lease,
        reserved = CASE WHEN s.reserved THEN {others_open} ELSE false END
    FROM conf
    WHERE s.id = (
        SELECT next.id FROM ({next_slot}) next
        WHERE NOT EXISTS (SELECT 1 FROM held) AND EXISTS (SELECT 1 FROM conf)
    )
    RETURNING s.id, s.sample_id, s.lease_expires_at, false AS resumed, s.gold
),
closed AS (
    UPDATE {assignment} a SET open = false
    FROM fresh
    WHERE a.reviewer_id = %(me)s AND a.sample_id = fresh.sample_id AND a.open
    RETURNING a.id
),
unreserved AS (
    UPDATE {slot} u SET reserved = false
    FROM fresh
    WHERE u.sample_id = fresh.sample_id
      AND u.reserved
      AND NOT u.gold
      AND u.id <> fresh.id
      AND NOT {others_open_fresh}
    RETURNING u.id
),
leased AS (
    SELECT h.id, h.sample_id, h.lease_expires_at, h.resumed, h.gold FROM held h
    UNION ALL
    SELECT f.id, f.sample_id, f.lease_expires_at, f.resumed, f.gold FROM fresh f
)
SELECT leased.id, leased.sample_id, leased.lease_expires_at, leased.resumed, leased.gold,
       conf.gold_rate, annotation_sample_card(leased.sample_id),
       EXISTS (SELECT 1 FROM closed) AS assigned
FROM leased, conf
""").format(
        next_slot=NEXT_SLOT,
        others_open=_OTHERS_OPEN.format(sample=sql.SQL("s.sample_id"), **_TABLES),
        others_open_fresh=_OTHERS_OPEN.format(sample=sql.SQL("fresh.sample_id"), **_TABLES),
        **_TABLES,
    )
)

RESERVE = _text(
    sql.SQL("""
UPDATE {slot} SET lease_expires_at = %(until)s
WHERE id = ({next_slot})
RETURNING id, sample_id, EXISTS (
    SELECT 1 FROM {assignment} a
    WHERE a.reviewer_id = %(me)s AND a.sample_id = {slot}.sample_id AND a.open
)
""").format(next_slot=NEXT_SLOT, **_TABLES)
)

# Serving a slot taken otherwise than by :data:`CLAIM` (a reservation made the reviewer's
# lease; ``%(taken)s`` the slot, ``%(me)s`` the reviewer), as the claim does in its statement.
SERVED = _text(
    sql.SQL("""
WITH closed AS (
    UPDATE {assignment} a SET open = false
    FROM {slot} t
    WHERE t.id = %(taken)s AND a.reviewer_id = %(me)s AND a.sample_id = t.sample_id AND a.open
    RETURNING a.sample_id
)
UPDATE {slot} u SET reserved = false
FROM {slot} t
WHERE t.id = %(taken)s
  AND u.sample_id = t.sample_id
  AND u.reserved
  AND NOT u.gold
  AND NOT {others_open}
""").format(others_open=_OTHERS_OPEN.format(sample=sql.SQL("t.sample_id"), **_TABLES), **_TABLES)
)


def claim_params(
    *,
    dataset_id: int,
    reviewer_id: int,
    lead: bool,
    now: Any,
    skipped: bool = False,
    sample_id: int | None = None,
    default_lease_seconds: int,
    default_gold_rate: float,
) -> dict[str, Any]:
    """The parameters of :data:`CLAIM`."""
    return {
        "dataset": dataset_id,
        "me": reviewer_id,
        "lead": lead,
        "now": now,
        "skipped": skipped,
        "sample": sample_id,
        "default_lease": default_lease_seconds,
        "default_gold_rate": default_gold_rate,
    }
