"""The locks a submission takes on a sample's slots, read in one fixed statement, and the
slot writes that go with them (the submission itself is in ``review.services.reviews``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from django.db import connection

from annotation import hot_selectors
from annotation.models import Sample
from core.lease_sql import OPEN_SINCE
from core.prepared import hot_cursor
from core.rows import from_row
from review.models import Draft, Review, ReviewerExclusion, ReviewSettings, Skip, Slot

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def slots_locked_sql() -> str:
    """Every slot of a sample, locked, with the dataset's overlap and whether the submission
    id was seen, the reviewer holds a draft of the sample, or skipped it: fixed SQL, since
    every submission runs it and the ORM's building of four subqueries cost more CPU than
    the database's work (built once per database vendor)."""
    return _slots_locked_sql(connection.vendor)


@cache
def _slots_locked_sql(vendor: str, member: str | None = None) -> str:
    slots = Slot._meta.db_table
    columns = ", ".join(f's."{f.column}"' for f in Slot._meta.concrete_fields)
    lock = " FOR UPDATE OF s" if connection.features.has_select_for_update_of else ""
    sample, join = "", ""
    if member is not None:
        sample = f", {hot_selectors.sample_with_dataset_select()}"
        join = f" {hot_selectors.sample_with_dataset_join(on='s.sample_id', member=member)}"
    return (
        f"SELECT {columns}, "  # noqa: S608 - model tables
        f"(SELECT overlap FROM {ReviewSettings._meta.db_table} c "
        "WHERE c.dataset_id = s.dataset_id) AS overlap, "
        f"EXISTS (SELECT 1 FROM {Review._meta.db_table} r WHERE r.client_uuid = %s) AS replayed, "
        f"EXISTS (SELECT 1 FROM {Draft._meta.db_table} d "
        "WHERE d.sample_id = s.sample_id AND d.reviewer_id = %s) AS has_draft, "
        f"EXISTS (SELECT 1 FROM {Skip._meta.db_table} k "
        "WHERE k.sample_id = s.sample_id AND k.reviewer_id = %s) AS has_skip, "
        f"EXISTS (SELECT 1 FROM {ReviewerExclusion._meta.db_table} x "
        "WHERE x.dataset_id = s.dataset_id AND x.reviewer_id = s.reviewer_id) AS excluded, "
        f"EXISTS (SELECT 1 FROM {ReviewerExclusion._meta.db_table} x "
        f"WHERE x.dataset_id = s.dataset_id AND x.reviewer_id = %s) AS me_excluded{sample} "
        f"FROM {slots} s{join} WHERE s.sample_id = %s ORDER BY s.id{lock}"
    )


_EXTRAS = ("overlap", "replayed", "has_draft", "has_skip", "excluded", "me_excluded")


def slots_locked(*, sample: Sample, reviewer: User, client_uuid: uuid.UUID) -> list[Slot]:
    """The sample's slots, locked, each with the ``_EXTRAS`` of the statement as attributes
    (the booleans as read: SQLite answers 0 or 1)."""
    params = [_uuid(client_uuid), reviewer.pk, reviewer.pk, reviewer.pk, sample.pk]
    with hot_cursor() as cursor:
        cursor.execute(slots_locked_sql(), params)
        rows = cursor.fetchall()
    return [_slot(row) for row in rows]


def slots_locked_with_sample_sql(member: str) -> str:
    """:func:`slots_locked_sql` reading the sample and its dataset too, when ``member``
    holds; its parameters: the submission id, the reviewer three times, the reviewer again
    unless ``member`` is ``hot_selectors.ALL``, the sample."""
    return _slots_locked_sql(connection.vendor, member)


def slots_locked_with_sample(
    *, sample_id: int, reviewer: User, member: str, client_uuid: uuid.UUID
) -> tuple[Sample | None, list[Slot]]:
    """As :func:`slots_locked` for a sample given by its id, read in the same statement with
    its dataset when ``member`` (``annotation.hot_selectors.member_test`` with ``%s``, the
    reviewer) lets the reviewer see it; (None, []) when it does not, or the sample has no slot
    (the caller tells the two apart)."""
    params = [_uuid(client_uuid), reviewer.pk, reviewer.pk, reviewer.pk]
    if member != hot_selectors.ALL:
        params.append(reviewer.pk)
    with hot_cursor() as cursor:
        cursor.execute(slots_locked_with_sample_sql(member), [*params, sample_id])
        rows = cursor.fetchall()
    if not rows:
        return None, []
    cut = len(Slot._meta.concrete_fields) + len(_EXTRAS)
    return hot_selectors.sample_from_row(rows[0][cut:]), [_slot(row[:cut]) for row in rows]


def _uuid(client_uuid: uuid.UUID) -> Any:
    return Review._meta.get_field("client_uuid").get_db_prep_value(client_uuid, connection)


def _slot(row: Sequence[Any]) -> Slot:
    n = len(Slot._meta.concrete_fields)
    slot = from_row(Slot, row[:n])
    for name, value in zip(_EXTRAS, row[n:], strict=True):
        setattr(slot, name, value)
    return slot


def drop_draft_and_skip(locked: Slot | None, mine: dict[str, Any], *, skip: bool) -> None:
    """Delete the reviewer's draft (and skip) of the sample, when the lock read one."""
    if locked is None or getattr(locked, "has_draft", True):
        Draft.objects.filter(**mine).delete()
    if skip and (locked is None or getattr(locked, "has_skip", True)):
        Skip.objects.filter(**mine).delete()


def open_replacement(*, sample: Sample, slots: Sequence[Slot]) -> None:
    """Open one more slot in the sample's round, after the last ones (which a lease may hold)."""
    Slot.objects.create(
        dataset_id=sample.dataset_id,
        sample=sample,
        round=slots[0].round,
        position=1 + max(s.position for s in slots),
        judges_disagree=slots[0].judges_disagree,
        priority=slots[0].priority,
        lease_expires_at=OPEN_SINCE,
    )
