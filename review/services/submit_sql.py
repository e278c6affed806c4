"""A submission's statements, each written out whole: the slot lock, the review's writes, the
round's counted reviews and the settlement's writes.

A submission locks every slot of its sample (:data:`LOCK`), which serialises the submissions of
one sample: the k-th review is seen by exactly one transaction, which settles the sample. The
lock reads the submitted sample along, with its dataset, when the reviewer may review in it
(annotation's SQL function ``annotation_sample_visible``, which tests visibility as the claim
does), and locks nothing when they may not: a submission by sample id sends no statement of
its own to read the sample (measured with ``bench/profile_review.py``: a claim and submit sent
one statement and 26% of their Python calls fewer, 10.8k instead of 14.6k, than with the ORM's
read of the sample before the lock). Its writes are then one statement of data-modifying CTEs
(:data:`WRITE`): the review, its slot, the reviewer's draft and skip, the sample's first status
step (annotation's SQL function ``annotation_sample_step``) and, when the review settles the
sample, the round's other counted reviews (:data:`COUNTED`) and the sample's status as it
stands after the lock (a statement run after the lock sees every review committed before it
was granted). A settlement's writes are
one more (:data:`SETTLE`): the status step, the outcome, the review summary note
(``annotation_sample_notes_set``) and the deletion of the round's open slots, all only when the
step was made (or none was asked for: a settlement that applied edits moved the status with
annotation's ``sample_update``).

Parameters are by name; the statements are plain text composed once with ``psycopg.sql``.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import connection
from psycopg import sql

_TABLES = {
    "slot": sql.Identifier("review_slot"),
    "review": sql.Identifier("review_review"),
    "draft": sql.Identifier("review_draft"),
    "skip": sql.Identifier("review_skip"),
    "settings": sql.Identifier("review_reviewsettings"),
    "exclusion": sql.Identifier("review_reviewerexclusion"),
    "outcome": sql.Identifier("review_outcome"),
    "user": sql.Identifier("auth_user"),
}


def _text(statement: sql.Composable) -> str:
    return statement.as_string(None)


LOCK = _text(
    sql.SQL("""
WITH visible AS MATERIALIZED (
    SELECT CASE WHEN %(read_sample)s
        THEN annotation_sample_visible(%(sample)s, %(me)s, %(lead)s, 'annotator')
    END AS sample
)
SELECT visible.sample, locked.*
FROM visible
LEFT JOIN LATERAL (
    SELECT s.id, s.round, s.position, s.reviewer_id, s.leased_at, s.lease_expires_at, s.done,
           s.gold, s.judges_disagree, s.priority,
           EXISTS (
               SELECT 1 FROM {exclusion} x
               WHERE x.dataset_id = s.dataset_id AND x.reviewer_id = s.reviewer_id
           ) AS excluded,
           (SELECT c.overlap FROM {settings} c WHERE c.dataset_id = s.dataset_id) AS overlap,
           EXISTS (SELECT 1 FROM {review} r WHERE r.client_uuid = %(client_uuid)s) AS replayed,
           EXISTS (
               SELECT 1 FROM {draft} d WHERE d.sample_id = s.sample_id AND d.reviewer_id = %(me)s
           ) AS has_draft,
           EXISTS (
               SELECT 1 FROM {skip} k WHERE k.sample_id = s.sample_id AND k.reviewer_id = %(me)s
           ) AS has_skip,
           EXISTS (
               SELECT 1 FROM {exclusion} x
               WHERE x.dataset_id = s.dataset_id AND x.reviewer_id = %(me)s
           ) AS me_excluded
    FROM {slot} s
    WHERE s.sample_id = %(sample)s AND (NOT %(read_sample)s OR visible.sample IS NOT NULL)
    ORDER BY s.id
    FOR UPDATE OF s
) locked ON true
ORDER BY locked.id
""").format(**_TABLES)
)

COUNTED = sql.SQL("""
    SELECT json_agg(
        json_build_array(u.username, r.decision, r."values", r.reject_reason)
        ORDER BY r.created_at, r.id
    )::text
    FROM {review} r
    JOIN {user} u ON u.id = r.reviewer_id
    WHERE r.sample_id = %(sample)s
      AND r.round = %(round)s
      AND NOT EXISTS (
          SELECT 1 FROM {exclusion} x
          WHERE x.dataset_id = r.dataset_id AND x.reviewer_id = r.reviewer_id
      )""").format(**_TABLES)

WRITE = _text(
    sql.SQL("""
WITH new_review AS (
    INSERT INTO {review} (
        sample_id, dataset_id, reviewer_id, client_uuid, decision, reject_reason, "values",
        clarity, naturalness, image_aligned, audio_aligned, note, seconds_spent,
        slot_id, round, leased_at, created_at
    ) VALUES (
        %(sample)s, %(dataset)s, %(me)s, %(client_uuid)s, %(decision)s, %(reject_reason)s,
        %(values)s::jsonb, %(clarity)s, %(naturalness)s, %(image_aligned)s, %(audio_aligned)s,
        %(note)s, %(seconds_spent)s, %(slot)s, %(round)s, %(leased_at)s, %(now)s
    )
    RETURNING id
),
filled AS (
    UPDATE {slot} SET done = true, reviewer_id = %(me)s WHERE id = %(slot)s
),
no_draft AS (
    DELETE FROM {draft}
    WHERE %(drop_draft)s AND sample_id = %(sample)s AND reviewer_id = %(me)s
),
no_skip AS (
    DELETE FROM {skip}
    WHERE %(drop_skip)s AND sample_id = %(sample)s AND reviewer_id = %(me)s
)
SELECT
    (SELECT id FROM new_review),
    CASE WHEN %(step)s THEN annotation_sample_step(
        %(sample)s, 'pending_review', 'in_review', %(me)s, 'review', %(reason)s, %(now)s
    ) END,
    CASE WHEN %(read_round)s THEN ({counted}) END,
    CASE WHEN %(read_round)s THEN annotation_sample_status(%(sample)s) END
""").format(counted=COUNTED, **_TABLES)
)

SETTLE = _text(
    sql.SQL("""
WITH step AS (
    SELECT CASE WHEN %(step)s THEN annotation_sample_step(
        %(sample)s, %(from)s, %(to)s, %(by)s, 'review', %(reason)s, %(now)s
    ) END AS revision
),
go AS (
    SELECT 1 FROM step WHERE NOT %(step)s OR step.revision IS NOT NULL
),
outcome AS (
    INSERT INTO {outcome} (
        sample_id, dataset_id, status, agreement, adjudicated, adjudicated_by_id, note,
        decided_at
    )
    SELECT %(sample)s, %(dataset)s, %(to)s, %(agreement)s, false, NULL, '', %(now)s FROM go
    ON CONFLICT (sample_id) DO UPDATE SET
        status = EXCLUDED.status,
        agreement = EXCLUDED.agreement,
        adjudicated = EXCLUDED.adjudicated,
        adjudicated_by_id = EXCLUDED.adjudicated_by_id,
        note = EXCLUDED.note,
        decided_at = EXCLUDED.decided_at
),
closed AS (
    DELETE FROM {slot}
    WHERE %(close)s AND sample_id = %(sample)s AND NOT done AND NOT gold
      AND EXISTS (SELECT 1 FROM go)
)
SELECT
    (SELECT revision FROM step),
    EXISTS (SELECT 1 FROM go),
    (SELECT annotation_sample_notes_set(
        ARRAY[%(sample)s::bigint], 'review_summary', ARRAY[%(summary)s::jsonb], %(now)s
    ) FROM go WHERE %(summary)s::jsonb IS NOT NULL)
""").format(**_TABLES)
)


@dataclass(frozen=True)
class LockedSlot:
    """A slot of the sample, as the lock read it; ``excluded``: its reviewer is excluded from
    the dataset's consensus (their review fills the slot but does not count towards k)."""

    id: int
    round: int
    position: int
    reviewer_id: int | None
    leased_at: dt.datetime | None
    lease_expires_at: dt.datetime
    done: bool
    gold: bool
    judges_disagree: bool
    priority: int
    excluded: bool


@dataclass(frozen=True)
class Locks:
    """Every slot of a sample, locked, with what the submission reads along: the dataset's
    overlap (None: no settings saved), whether this submission id was seen, whether the
    reviewer holds a draft or a skip of the sample, whether they are excluded and, when asked
    (``read_sample``), the sample with its dataset as annotation's ``annotation_sample_visible``
    answers them (``annotation.selectors.sample_from_visible`` reads it; None: not visible to
    the reviewer as an annotator, and then nothing is locked)."""

    slots: list[LockedSlot]
    overlap: int | None
    replayed: bool
    has_draft: bool
    has_skip: bool
    me_excluded: bool
    sample_json: str | None = None


def slots_lock(
    *,
    sample_id: int,
    reviewer_id: int,
    client_uuid: uuid.UUID,
    read_sample: bool = False,
    lead: bool = False,
) -> Locks:
    """Lock the sample's slots (:data:`LOCK`), inside the caller's transaction; with
    ``read_sample``, only when the reviewer (a lead or not) may review in its dataset, and
    read the sample along."""
    params: dict[str, Any] = {
        "sample": sample_id,
        "me": reviewer_id,
        "client_uuid": client_uuid,
        "read_sample": read_sample,
        "lead": lead,
    }
    with connection.cursor() as cursor:
        cursor.execute(LOCK, params)
        rows = cursor.fetchall()
    first = rows[0]
    slots = [LockedSlot(*row[1:12]) for row in rows if row[1] is not None]
    overlap, replayed, has_draft, has_skip, me_excluded = first[12:17]
    return Locks(
        slots,
        overlap,
        bool(replayed),
        bool(has_draft),
        bool(has_skip),
        bool(me_excluded),
        first[0],
    )


@dataclass(frozen=True)
class Counted:
    """A review that counts towards the consensus, as the settlement reads it."""

    reviewer: str
    decision: str
    values: dict[str, Any]
    reject_reason: str


def _counted(value: str | None) -> list[Counted]:
    return [Counted(*entry) for entry in json.loads(value or "[]")]


def counted_reviews(*, sample_id: int, review_round: int) -> list[Counted]:
    """The round's reviews of reviewers not excluded from the consensus, oldest first."""
    with connection.cursor() as cursor:
        cursor.execute(_text(COUNTED), {"sample": sample_id, "round": review_round})
        (value,) = cursor.fetchone()
    return _counted(value)


@dataclass(frozen=True)
class Written:
    """What :func:`review_write` wrote and read: the review's id; the sample's new revision
    when its first step was made (None: not asked, or it had moved on already); and, when
    asked, the round's other counted reviews and the sample's status after the lock."""

    review_id: int
    revision: int | None
    counted: list[Counted] | None
    status: str | None


def review_write(
    *,
    slot: LockedSlot,
    sample_id: int,
    dataset_id: int,
    reviewer_id: int,
    fields: dict[str, Any],
    leased_at: dt.datetime | None,
    now: dt.datetime,
    drop_draft: bool,
    drop_skip: bool,
    first_step_reason: str | None,
    read_round: bool,
) -> Written:
    """Run :data:`WRITE`: insert the review into ``slot`` and mark the slot done (deleting the
    reviewer's draft and skip when asked); ``first_step_reason``: also move the sample from
    pending review to in review; ``read_round``: also read the round's other counted reviews
    and the sample's status."""
    params = {
        **fields,
        "values": json.dumps(fields["values"]),
        "sample": sample_id,
        "dataset": dataset_id,
        "me": reviewer_id,
        "slot": slot.id,
        "round": slot.round,
        "leased_at": leased_at,
        "now": now,
        "drop_draft": drop_draft,
        "drop_skip": drop_skip,
        "step": first_step_reason is not None,
        "reason": first_step_reason or "",
        "read_round": read_round,
    }
    with connection.cursor() as cursor:
        cursor.execute(WRITE, params)
        review_id, revision, counted, status = cursor.fetchone()
    return Written(review_id, revision, _counted(counted) if read_round else None, status)


@dataclass(frozen=True)
class Settlement:
    """What a settlement writes besides the sample's labels: the status it reaches (with the
    step from ``from_status``, unless ``step`` is False because the caller moved it), the
    outcome's agreement, the review summary note (None: left as it is) and whether the
    round's open slots go."""

    from_status: str
    to_status: str
    reason: str
    agreement: bool
    summary: dict[str, Any] | None
    close_open_slots: bool
    step: bool = True


@dataclass(frozen=True)
class Settled:
    """Whether :func:`settle_write` wrote (not when the step was asked for and the sample had
    left its status meanwhile), and the sample's new revision (None without a step)."""

    written: bool
    revision: int | None


def settle_write(
    *, sample_id: int, dataset_id: int, by_id: int | None, settlement: Settlement
) -> Settled:
    """Run :data:`SETTLE`."""
    now = dt.datetime.now(tz=dt.UTC)
    params = {
        "sample": sample_id,
        "dataset": dataset_id,
        "by": by_id,
        "step": settlement.step,
        "from": settlement.from_status,
        "to": settlement.to_status,
        "reason": settlement.reason,
        "agreement": settlement.agreement,
        "close": settlement.close_open_slots,
        "summary": None if settlement.summary is None else json.dumps(settlement.summary),
        "now": now,
    }
    with connection.cursor() as cursor:
        cursor.execute(SETTLE, params)
        revision, written, _noted = cursor.fetchone()
    return Settled(bool(written), revision)
