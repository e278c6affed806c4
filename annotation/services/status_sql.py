"""A sample's status step and a note upsert as parts of another app's PostgreSQL statement.

The review loop writes a review, fills its slot and moves its sample on in one round trip:
the writes are common table expressions of a single statement (PostgreSQL runs data-modifying
CTEs; SQLite does not, so callers keep ``sample_advance_status`` and ``sample_set_note`` there).
The SQL of annotation's tables stays here: the caller composes the parts, in order, with its
own. Each part writes what its service function writes:

- :func:`status_step_cte` is ``sample_advance_status``: the conditional update of the sample
  (which takes its row lock and counts the revision) and its history row, written only when
  the sample was still in ``from_status``; the caller selects ``(SELECT revision FROM name)``,
  NULL when nothing was written;
- :func:`note_upsert_cte` is ``sample_set_note`` for one sample known to exist, optionally
  only when another CTE wrote a row (``after``).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from annotation.models import NoteKey, Sample, SampleNote, SampleRevision, SampleStatus


@dataclass
class Statement:
    """A statement's parts in order: its CTEs and their parameters."""

    ctes: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)

    def add(self, sql: str, params: list[Any]) -> None:
        self.ctes.append(sql)
        self.params.extend(params)

    def sql(self, select: str) -> str:
        return f"WITH {', '.join(self.ctes)} {select}"


def status_step_cte(
    statement: Statement,
    *,
    name: str,
    sample_id: int,
    from_status: str,
    to_status: str,
    by_id: int | None,
    source: str,
    reason: str,
    now: dt.datetime,
) -> None:
    """Add the step of ``sample_advance_status`` as the CTEs ``name`` (its ``revision``, no
    row when the sample was no longer in ``from_status``) and ``name_history``."""
    if to_status not in SampleStatus.values:
        raise ValidationError(_("Unknown status “%(status)s”.") % {"status": to_status})
    samples, revisions = Sample._meta.db_table, SampleRevision._meta.db_table
    statement.add(
        f"{name} AS (UPDATE {samples} SET status = %s, revision = revision + 1, "  # noqa: S608 - model tables
        "updated_at = %s WHERE id = %s AND status = %s RETURNING revision), "
        f"{name}_history AS (INSERT INTO {revisions} (sample_id, number, changed_by_id, "
        "changed_at, source, before, after, reason) "
        f"SELECT %s, revision, %s, %s, %s, %s::jsonb, %s::jsonb, %s FROM {name})",
        [
            to_status,
            now,
            sample_id,
            from_status,
            sample_id,
            by_id,
            now,
            source,
            json.dumps({"status": from_status}),
            json.dumps({"status": to_status}),
            reason,
        ],
    )


def note_upsert_cte(
    statement: Statement,
    *,
    name: str,
    sample_id: int,
    key: NoteKey,
    value: Any,
    now: dt.datetime,
    after: str | None = None,
) -> None:
    """Add ``sample_set_note`` of one existing sample as the CTE ``name``; with ``after``,
    written only when the CTE of that name returned a row."""
    notes = SampleNote._meta.db_table
    source = f" FROM {after}" if after else ""
    statement.add(
        f"{name} AS (INSERT INTO {notes} (sample_id, key, value, updated_at) "
        f"SELECT %s, %s, %s::jsonb, %s{source} ON CONFLICT (sample_id, key) DO UPDATE "
        "SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at)",
        [sample_id, str(key), json.dumps(value), now],
    )
