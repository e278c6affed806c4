"""A submission's writes, and a settlement's, as one PostgreSQL statement each.

After the slot lock (``review.services.slot_locks``) has decided which slot the review fills,
the review, its slot, the reviewer's draft and skip and the sample's first status step go in
one statement of data-modifying CTEs, which also reads, when the review settles the sample,
the round's other counted reviews (a statement after the lock: it sees every review committed
before the lock was granted). The settlement's status move, history, outcome, summary note and
the deletion of the round's open slots are a second one. Each part writes what the ORM path of
``review.services.reviews`` writes, row for row; that path stays for SQLite (no such CTEs) and
for what this one does not cover (edits to apply, a status moved meanwhile).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.db import connection

from annotation.models import ChangeSource, NoteKey, Sample, SampleStatus
from annotation.services.status_sql import Statement, note_upsert_cte, status_step_cte
from core.prepared import hot_cursor
from review.models import Draft, Outcome, Review, ReviewerExclusion, Skip, Slot

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Tests turn this off to run the ORM path on PostgreSQL as well.
ENABLED = True

_REVIEW_COLUMNS = (
    "sample_id",
    "dataset_id",
    "reviewer_id",
    "client_uuid",
    "decision",
    "reject_reason",
    "values",
    "clarity",
    "naturalness",
    "image_aligned",
    "audio_aligned",
    "note",
    "seconds_spent",
    "slot_id",
    "round",
    "leased_at",
    "created_at",
)


def in_one_statement() -> bool:
    """Whether the database runs data-modifying CTEs (PostgreSQL)."""
    return ENABLED and connection.vendor == "postgresql"


@dataclass(frozen=True)
class Counted:
    """A review that counts towards the consensus, as the settlement reads it."""

    reviewer: str
    decision: str
    values: dict[str, Any]
    reject_reason: str


def review_write(
    *,
    slot: Slot,
    sample: Sample,
    reviewer: User,
    fields: dict[str, Any],
    drop_draft: bool,
    drop_skip: bool,
    first_step_reason: str | None,
    read_round: bool,
) -> tuple[Review, list[Counted] | None]:
    """Insert the review into ``slot`` and mark the slot done (with the draft and skip deletes
    asked for); ``first_step_reason``: also move the sample from pending review to in review;
    ``read_round``: also read the round's other counted reviews, oldest first, and the
    sample's status as it stands after the lock (the sample was read in the lock's statement,
    whose snapshot predates a concurrent first review that the lock waited for: settling from
    that stale status would miss the one-statement settlement)."""
    now = dt.datetime.now(tz=dt.UTC)
    leased_at = slot.leased_at if slot.reviewer_id == reviewer.pk else None
    row = {
        "sample_id": sample.pk,
        "dataset_id": sample.dataset_id,
        "reviewer_id": reviewer.pk,
        **fields,
        "values": json.dumps(fields["values"]),
        "slot_id": slot.pk,
        "round": slot.round,
        "leased_at": leased_at,
        "created_at": now,
    }
    statement = Statement()
    statement.add(_insert_sql(), [row[name] for name in _REVIEW_COLUMNS])
    statement.add(
        f"filled AS (UPDATE {Slot._meta.db_table} SET done = true, reviewer_id = %s "  # noqa: S608 - model tables
        "WHERE id = %s)",
        [reviewer.pk, slot.pk],
    )
    for name, model, wanted in (("no_draft", Draft, drop_draft), ("no_skip", Skip, drop_skip)):
        if wanted:
            statement.add(
                f"{name} AS (DELETE FROM {model._meta.db_table} "  # noqa: S608 - model tables
                "WHERE sample_id = %s AND reviewer_id = %s)",
                [sample.pk, reviewer.pk],
            )
    if first_step_reason is not None:
        status_step_cte(
            statement,
            name="stepped",
            sample_id=sample.pk,
            from_status=SampleStatus.PENDING_REVIEW,
            to_status=SampleStatus.IN_REVIEW,
            by_id=reviewer.pk,
            source=ChangeSource.REVIEW,
            reason=first_step_reason,
            now=now,
        )
    select = ["(SELECT id FROM new_review)"]
    select.append("(SELECT revision FROM stepped)" if first_step_reason is not None else "NULL")
    if read_round:
        select.append(_counted_sql())
        select.append(f"(SELECT status FROM {Sample._meta.db_table} WHERE id = %s)")  # noqa: S608 - model tables
        statement.params.extend([sample.pk, slot.round, sample.dataset_id, sample.pk])
    else:
        select.append("NULL, NULL")
    with hot_cursor() as cursor:
        cursor.execute(statement.sql("SELECT " + ", ".join(select)), statement.params)
        review_id, revision, counted, status_now = cursor.fetchone()
    if status_now is not None:
        sample.status = status_now
    if revision is not None:
        sample.status, sample.revision, sample.updated_at = SampleStatus.IN_REVIEW, revision, now
    review = Review(
        id=review_id,
        slot=slot,
        sample=sample,
        dataset_id=sample.dataset_id,
        reviewer=reviewer,
        round=slot.round,
        leased_at=leased_at,
        created_at=now,
        **fields,
    )
    if not read_round:
        return review, None
    return review, [Counted(*entry) for entry in json.loads(counted or "[]")]


@cache
def _insert_sql() -> str:
    columns = ", ".join(f'"{name}"' for name in _REVIEW_COLUMNS)
    holes = ", ".join("%s::jsonb" if name == "values" else "%s" for name in _REVIEW_COLUMNS)
    return (
        f"new_review AS (INSERT INTO {Review._meta.db_table} ({columns}) "  # noqa: S608 - model tables
        f"VALUES ({holes}) RETURNING id)"
    )


@cache
def _counted_sql() -> str:
    """The round's reviews of reviewers not excluded from the dataset's consensus, as a JSON
    array of [username, decision, values, reject_reason], oldest first."""
    users = get_user_model()
    username = users._meta.get_field(users.USERNAME_FIELD).column  # type: ignore[union-attr]
    return (
        "(SELECT json_agg(json_build_array("  # noqa: S608 - model tables
        f'u."{username}", r.decision, r."values", r.reject_reason) '
        "ORDER BY r.created_at, r.id)::text "
        f"FROM {Review._meta.db_table} r JOIN {users._meta.db_table} u ON u.id = r.reviewer_id "
        "WHERE r.sample_id = %s AND r.round = %s AND NOT EXISTS (SELECT 1 FROM "
        f"{ReviewerExclusion._meta.db_table} x "
        "WHERE x.dataset_id = %s AND x.reviewer_id = r.reviewer_id))"
    )


@dataclass(frozen=True)
class Settlement:
    """What a settlement writes when the sample's status moves without edits."""

    status: str
    reason: str
    agreement: bool
    summary: dict[str, Any] | None  # the review summary note; None: left as it is
    delete_open_slots: bool


def settle_write(*, sample: Sample, by: User | None, settlement: Settlement) -> bool:
    """Move the sample to the settled status with its history, upsert its outcome and note
    and delete the round's open slots, all only if the sample is still in the status it was
    read in; False, with nothing written, when it was not."""
    now = dt.datetime.now(tz=dt.UTC)
    statement = Statement()
    status_step_cte(
        statement,
        name="moved",
        sample_id=sample.pk,
        from_status=sample.status,
        to_status=settlement.status,
        by_id=by.pk if by is not None else None,
        source=ChangeSource.REVIEW,
        reason=settlement.reason,
        now=now,
    )
    statement.add(
        f"outcome AS (INSERT INTO {Outcome._meta.db_table} (sample_id, dataset_id, status, "  # noqa: S608 - model tables
        "agreement, adjudicated, adjudicated_by_id, note, decided_at) "
        "SELECT %s, %s, %s, %s, false, NULL, '', %s FROM moved "
        "ON CONFLICT (sample_id) DO UPDATE SET status = EXCLUDED.status, "
        "agreement = EXCLUDED.agreement, adjudicated = EXCLUDED.adjudicated, "
        "adjudicated_by_id = EXCLUDED.adjudicated_by_id, note = EXCLUDED.note, "
        "decided_at = EXCLUDED.decided_at)",
        [sample.pk, sample.dataset_id, settlement.status, settlement.agreement, now],
    )
    if settlement.summary is not None:
        note_upsert_cte(
            statement,
            name="summary",
            sample_id=sample.pk,
            key=NoteKey.REVIEW_SUMMARY,
            value=settlement.summary,
            now=now,
            after="moved",
        )
    if settlement.delete_open_slots:
        statement.add(
            f"closed AS (DELETE FROM {Slot._meta.db_table} WHERE sample_id = %s "  # noqa: S608 - model tables
            "AND NOT done AND NOT gold AND EXISTS (SELECT 1 FROM moved))",
            [sample.pk],
        )
    with hot_cursor() as cursor:
        cursor.execute(statement.sql("SELECT revision FROM moved"), statement.params)
        row = cursor.fetchone()
    if row is None:
        return False
    sample.status, sample.revision, sample.updated_at = settlement.status, row[0], now
    return True
