"""Reads on the review loop's hot path: one plain SQL statement each, no query compilation.

The review API claims and submits many times a second; the ORM's query building costs more
CPU there than the database's work. These selectors answer what ``selectors`` answers (a
dataset or a sample the user may see, a sample's fields and media) with fixed SQL, portable
between PostgreSQL and SQLite, the visibility test inside the same statement. The user's
roles must be known (token authentication loads them; otherwise ``core.roles`` reads them
once per request).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.db import connection

from annotation.models import (
    MEMBER_ROLE_FIELDS,
    Dataset,
    DatasetMembership,
    MediaAsset,
    Sample,
    SampleMedia,
)
from core.roles import is_lead, user_roles
from core.rows import columns, db_values

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

    AnyUser = User | AnonymousUser


def _member_test(user: AnyUser, role: str | None) -> tuple[str, list[Any]] | None:
    """The SQL condition "the user may see dataset d" (None: no dataset at all)."""
    test = member_test(user=user, role=role, user_param="%s")
    return None if test is None else (test, [] if test == ALL else [user.pk])


ALL = "1 = 1"


def member_test(*, user: AnyUser, role: str | None, user_param: str) -> str | None:
    """The SQL condition "the user may see dataset ``d``" (and work in it in ``role``, when
    given), for another statement to include: :data:`ALL` for a lead, a membership test whose
    user is the placeholder ``user_param`` (the caller passes the user's id), or None when the
    user may see no dataset (in that role) at all.

    The one membership test of the SQL paths: a member works in a dataset only in the roles
    their membership there holds (``DatasetMembership.annotates``, ``audits``); the
    site-wide role groups tested first only rule out, without a query, users who hold the
    role in no dataset (``annotation.services`` keeps them equal to the memberships' roles)."""
    if not user.is_authenticated:
        return None
    if is_lead(user):
        return ALL
    if role is not None and role not in user_roles(user):
        return None
    members = DatasetMembership._meta.db_table
    in_role = "" if role is None else f' AND m."{_role_column(role)}"'
    return (
        f"EXISTS (SELECT 1 FROM {members} m "  # noqa: S608 - model tables
        f"WHERE m.dataset_id = d.id AND m.user_id = {user_param}{in_role})"
    )


def _role_column(role: str) -> str:
    """The membership's column that grants ``role`` in its dataset (a fixed name)."""
    field = DatasetMembership._meta.get_field(MEMBER_ROLE_FIELDS[role])
    return str(field.column)  # type: ignore[union-attr]


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


def sample_visible(*, user: AnyUser, sample_id: int, role: str | None = None) -> Sample | None:
    """A sample the user may see (and work on in ``role``, when given), with its dataset (as
    ``selectors.sample_get_visible`` without media), in one statement."""
    test = _member_test(user, role)
    if test is None:
        return None
    sql = (
        f"SELECT {sample_with_dataset_select()} FROM {Sample._meta.db_table} smp "  # noqa: S608 - model tables
        f"{sample_with_dataset_join(on=None, member=test[0])} WHERE smp.id = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*test[1], sample_id])
        row = cursor.fetchone()
    return None if row is None else sample_from_row(row)


def sample_with_dataset_select() -> str:
    """The columns of a sample ``smp`` and its dataset ``d`` (:func:`sample_with_dataset_join`),
    for another statement to read; :func:`sample_from_row` makes them a sample."""
    return f"{columns(Sample, 'smp')[1]}, {columns(Dataset, 'd')[1]}"


def sample_with_dataset_join(*, on: str | None, member: str) -> str:
    """JOINs of the sample ``smp`` whose id is ``on`` (None: ``smp`` is the statement's own
    table) and of its dataset ``d``, when ``member`` (:func:`member_test`) holds."""
    sample = "" if on is None else f"JOIN {Sample._meta.db_table} smp ON smp.id = {on} "
    return f"{sample}JOIN {Dataset._meta.db_table} d ON d.id = smp.dataset_id AND {member}"


def sample_from_row(row: Sequence[Any]) -> Sample:
    """The sample, its dataset attached, from the columns of :func:`sample_with_dataset_select`."""
    sample_names, _sql = columns(Sample, "smp")
    dataset_names, _sql = columns(Dataset, "d")
    cut = len(sample_names)
    sample = Sample.from_db(connection.alias, sample_names, db_values(Sample, row[:cut]))
    dataset = Dataset.from_db(connection.alias, dataset_names, db_values(Dataset, row[cut:]))
    sample.dataset = dataset
    return sample


def visible_dataset_from(*, dataset_param: str, member: str) -> str:
    """A FROM clause (with its WHERE) of the dataset ``d`` with the id ``dataset_param``,
    when ``member`` (:func:`member_test`) holds: for a statement reading values of it."""
    return f"FROM {Dataset._meta.db_table} d WHERE d.id = {dataset_param} AND {member}"


def card_select(*, fields: Sequence[str], sample: str) -> str:
    """The columns of a sample card, for another statement over the sample alias ``sample``:
    the fields, then the media links (role, asset id, MIME type, in order) as one JSON array;
    :func:`card_values` reads them back."""
    columns = ", ".join(f'{sample}."{Sample._meta.get_field(name).column}"' for name in fields)  # type: ignore[union-attr]
    return (
        f"{columns}, (SELECT json_agg(json_build_array(m.role, m.asset_id, a.mime_type) "  # noqa: S608 - model tables
        f"ORDER BY m.role, m.position) FROM {SampleMedia._meta.db_table} m "
        f"JOIN {MediaAsset._meta.db_table} a ON a.id = m.asset_id "
        f"WHERE m.sample_id = {sample}.id)"
    )


def card_values(
    *, fields: Sequence[str], row: Sequence[Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The fields and media of a card read with :func:`card_select` (``row``: its columns)."""
    values = dict(zip(fields, db_values(Sample, row[: len(fields)], fields), strict=True))
    links = row[len(fields)] or []
    if isinstance(links, str):  # json is decoded by psycopg; a text loader leaves it as is
        links = json.loads(links)
    media = [{"role": role, "asset_id": asset, "mime_type": mime} for role, asset, mime in links]
    return values, media


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
