"""Reads on the review loop's hot path: one plain SQL statement each, no query compilation.

The review API claims and submits many times a second; the ORM's query building costs more
CPU there than the database's work. These selectors answer what ``selectors`` answers (a
dataset or a sample the user may see, a sample's fields and media) with fixed SQL, portable
between PostgreSQL and SQLite, the visibility test inside the same statement. The user's
roles must be known (token authentication loads them; otherwise ``core.roles`` reads them
once per request).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.db import connection

from annotation.models import Dataset, DatasetMembership, MediaAsset, Sample, SampleMedia
from core.roles import is_lead, user_roles
from core.rows import columns, db_values

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

    AnyUser = User | AnonymousUser


def _member_test(user: AnyUser, role: str | None) -> tuple[str, list[Any]] | None:
    """The SQL condition "the user may see dataset d" (None: no dataset at all)."""
    if not user.is_authenticated:
        return None
    if is_lead(user):
        return "1 = 1", []
    if role is not None and role not in user_roles(user):
        return None
    members = DatasetMembership._meta.db_table
    test = f"EXISTS (SELECT 1 FROM {members} m WHERE m.dataset_id = d.id AND m.user_id = %s)"  # noqa: S608 - model tables
    return test, [user.pk]


def dataset_visible(*, user: AnyUser, dataset_id: int, role: str | None = None) -> Dataset | None:
    """As ``selectors.dataset_get_visible``, in one statement."""
    test = _member_test(user, role)
    if test is None:
        return None
    names, dataset_columns = columns(Dataset, "d")
    sql = f"SELECT {dataset_columns} FROM {Dataset._meta.db_table} d WHERE d.id = %s AND {test[0]}"  # noqa: S608 - model tables
    with connection.cursor() as cursor:
        cursor.execute(sql, [dataset_id, *test[1]])
        row = cursor.fetchone()
    return (
        None if row is None else Dataset.from_db(connection.alias, names, db_values(Dataset, row))
    )


def sample_visible(*, user: AnyUser, sample_id: int) -> Sample | None:
    """A sample the user may see, with its dataset (as ``selectors.sample_get_visible``
    without media), in one statement."""
    test = _member_test(user, None)
    if test is None:
        return None
    sample_names, sample_columns = columns(Sample, "s")
    dataset_names, dataset_columns = columns(Dataset, "d")
    sql = (
        f"SELECT {sample_columns}, {dataset_columns} FROM {Sample._meta.db_table} s "  # noqa: S608 - model tables
        f"JOIN {Dataset._meta.db_table} d ON d.id = s.dataset_id WHERE s.id = %s AND {test[0]}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [sample_id, *test[1]])
        row = cursor.fetchone()
    if row is None:
        return None
    cut = len(sample_names)
    sample = Sample.from_db(connection.alias, sample_names, db_values(Sample, row[:cut]))
    dataset = Dataset.from_db(connection.alias, dataset_names, db_values(Dataset, row[cut:]))
    sample.dataset = dataset
    return sample


def sample_card(*, sample_id: int, fields: Sequence[str]) -> tuple[dict[str, Any], list[Any]]:
    """Some fields of a sample and its media links (role, asset id, MIME type, in order), in
    one statement; ({}, []) when there is no such sample."""
    columns = ", ".join(f's."{Sample._meta.get_field(name).column}"' for name in fields)  # type: ignore[union-attr]
    sql = (
        f"SELECT {columns}, m.role, m.asset_id, a.mime_type FROM {Sample._meta.db_table} s "  # noqa: S608 - model tables
        f"LEFT JOIN {SampleMedia._meta.db_table} m ON m.sample_id = s.id "
        f"LEFT JOIN {MediaAsset._meta.db_table} a ON a.id = m.asset_id "
        "WHERE s.id = %s ORDER BY m.role, m.position"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [sample_id])
        rows = cursor.fetchall()
    if not rows:
        return {}, []
    n = len(fields)
    values = dict(zip(fields, db_values(Sample, rows[0][:n], fields), strict=True))
    media = [
        {"role": row[n], "asset_id": row[n + 1], "mime_type": row[n + 2]}
        for row in rows
        if row[n + 1] is not None
    ]
    return values, media
