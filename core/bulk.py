"""Inserting many new rows of one model fast: PostgreSQL COPY, ``bulk_create`` elsewhere.

``bulk_create`` on PostgreSQL composes one statement whose every value psycopg quotes in
Python (client-side binding): for tens of thousands of wide rows that costs more than the
database's own work. ``rows_insert`` takes plain dicts (attribute name -> value, the model's
defaults filling what is missing), reserves the primary keys with one ``nextval`` query and
streams the rows with ``COPY``, which psycopg encodes in C (``rows_copy_values``: without
reserving them, for rows nobody refers to by key). It runs inside the caller's
transaction, so a failure leaves nothing. A JSON field's value given as ``JsonText`` is stored
as it is, so a caller that has a row's JSON text already need not encode it again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection, models
from django.utils import timezone
from psycopg import sql


class JsonText(str):
    """The value of a JSON field, already encoded as JSON text."""

    __slots__ = ()


def _columns(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    pk = model._meta.pk
    return [f for f in model._meta.concrete_fields if f is not pk]


def _is_json(field: models.Field[Any, Any]) -> bool:
    return isinstance(field, models.JSONField)


def _encoder(field: models.Field[Any, Any]) -> Any:
    return getattr(field, "encoder", None)


def _default(field: models.Field[Any, Any], now: Any) -> Any:
    """The value stored for a field the row does not give (as bulk_create would store it)."""
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return now
    value = field.get_default()
    if _is_json(field) and value is not None:
        return json.dumps(value, cls=_encoder(field))
    return value


def _reserve_ids(model: type[models.Model], count: int) -> list[int]:
    pk = model._meta.pk
    assert pk is not None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [model._meta.db_table, pk.column, count],
        )
        return [row[0] for row in cursor.fetchall()]


def _names(columns: Sequence[str]) -> sql.Composed:
    return sql.SQL(", ").join(map(sql.Identifier, columns))


def _copy(table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    statement = sql.SQL("COPY {table} ({columns}) FROM STDIN").format(
        table=sql.Identifier(table), columns=_names(columns)
    )
    with connection.cursor() as cursor:
        raw = cursor.cursor  # the psycopg cursor under Django's wrapper
        with raw.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)


def _tuples(
    model: type[models.Model], rows: Sequence[Mapping[str, Any]]
) -> tuple[list[str], list[list[Any]]]:
    """The columns and each row's values in COPY's order, defaults and JSON text filled in."""
    fields = _columns(model)
    now = timezone.now()
    defaults = {f.attname: _default(f, now) for f in fields}
    names = [f.attname for f in fields]
    json_fields = [(f.attname, _encoder(f)) for f in fields if _is_json(f)]
    timed = [f.attname for f in fields if getattr(f, "auto_now", False)]
    values: list[list[Any]] = []
    for row in rows:
        full = {**defaults, **row}
        for name in timed:  # auto_now fields take the time of the write, as save() does
            full[name] = now
        for name, encoder in json_fields:
            value = full[name]
            if name in row and value is not None and not isinstance(value, JsonText):
                full[name] = json.dumps(value, cls=encoder)
        values.append([full[name] for name in names])
    return [f.column for f in fields], values


def rows_insert(model: type[models.Model], rows: Sequence[Mapping[str, Any]]) -> list[int]:
    """Insert new rows given as {attname: value}; return their primary keys in order."""
    if not rows:
        return []
    columns, values = _tuples(model, rows)
    ids = _reserve_ids(model, len(values))
    pk = model._meta.pk
    assert pk is not None
    _copy(
        model._meta.db_table,
        [pk.column, *columns],
        [[pk_value, *row] for pk_value, row in zip(ids, values, strict=True)],
    )
    return ids


def rows_insert_values(
    model: type[models.Model], names: Sequence[str], rows: Sequence[Sequence[Any]]
) -> list[int]:
    """Insert new rows given as values in the order of ``names`` (attribute names; the
    other fields take their defaults, auto_now fields the time of the write); return their
    primary keys in order. As ``rows_insert`` without a dict per row: for the import's
    tens of thousands of rows, merging each with the defaults cost more than COPY itself."""
    if not rows:
        return []
    ids = _reserve_ids(model, len(rows))
    _copy_values(model, names, rows, ids)
    return ids


def rows_copy_values(
    model: type[models.Model], names: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """As ``rows_insert_values`` for a caller that needs no primary keys: the database numbers
    the rows (the column's own default), so COPY is the only statement."""
    if rows:
        _copy_values(model, names, rows, None)


def _copy_values(
    model: type[models.Model],
    names: Sequence[str],
    rows: Sequence[Sequence[Any]],
    ids: Sequence[int] | None,
) -> None:
    fields = _columns(model)
    by_name = {f.attname: f for f in fields}
    given = [by_name[name] for name in names]
    rest = [f for f in fields if f.attname not in set(names)]
    now = timezone.now()
    tail = tuple(now if getattr(f, "auto_now", False) else _default(f, now) for f in rest)
    # JSON values not given as JsonText (nor None) are encoded here.
    encode = [(i, _encoder(f)) for i, f in enumerate(given) if _is_json(f)]
    values: list[tuple[Any, ...]] = []
    for index, row in enumerate(rows):
        if encode:
            row = list(row)
            for i, encoder in encode:
                value = row[i]
                if value is not None and not isinstance(value, JsonText):
                    row[i] = json.dumps(value, cls=encoder)
        values.append((*row, *tail) if ids is None else (ids[index], *row, *tail))
    columns = [*(f.column for f in given), *(f.column for f in rest)]
    if ids is not None:
        assert len(ids) == len(rows)
        pk = model._meta.pk
        assert pk is not None
        columns.insert(0, pk.column)
    _copy(model._meta.db_table, columns, values)


def rows_insert_new(
    model: type[models.Model], rows: Sequence[Mapping[str, Any]], *, unique: str
) -> None:
    """Insert rows, skipping any whose ``unique`` column is taken already (by a concurrent
    writer): COPY into a temporary table, then one INSERT … ON CONFLICT DO NOTHING."""
    if not rows:
        return
    columns, values = _tuples(model, rows)
    names = {
        "table": sql.Identifier(model._meta.db_table),
        "staging": sql.Identifier(f"staging_{model._meta.db_table}"),
        "columns": _names(columns),
        "unique": sql.Identifier(unique),
    }
    with connection.cursor() as cursor:
        cursor.execute(
            sql.SQL(
                "CREATE TEMPORARY TABLE {staging} ON COMMIT DROP AS "
                "SELECT {columns} FROM {table} WITH NO DATA"
            ).format(**names)
        )
    _copy(f"staging_{model._meta.db_table}", columns, values)
    with connection.cursor() as cursor:
        cursor.execute(
            sql.SQL(
                "INSERT INTO {table} ({columns}) SELECT {columns} FROM {staging} "
                "ON CONFLICT ({unique}) DO NOTHING"
            ).format(**names)
        )
        cursor.execute(sql.SQL("DROP TABLE {staging}").format(**names))
