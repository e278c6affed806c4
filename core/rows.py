"""Model instances from rows of fixed SQL, as the ORM would build them, without its querysets.

On the review loop's hot path a raw statement's rows become model instances: the ORM's
``RawQuerySet`` works out its column mapping and converters for every query; these helpers do
it once per model and column list.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, connections, models

M = TypeVar("M", bound=models.Model)


@cache
def columns(model: Any, alias: str) -> tuple[list[str], str]:
    """A model's concrete fields' attribute names, and their columns as SQL (``alias."col"``)."""
    fields = model._meta.concrete_fields
    return [f.attname for f in fields], ", ".join(f'{alias}."{f.column}"' for f in fields)


@cache
def _converters(model: Any, names: tuple[str, ...], vendor: str) -> list[tuple[Any, list[Any]]]:
    """Per field: its column expression and the converters the ORM would apply to it."""
    out = []
    for name in names:
        field = model._meta.get_field(name)
        col = field.get_col(model._meta.db_table)
        out.append(
            (col, connection.ops.get_db_converters(col) + field.get_db_converters(connection))
        )
    return out


def db_values(model: Any, row: Sequence[Any], names: Sequence[str] | None = None) -> list[Any]:
    """A raw row's values as the model's fields hold them (as the ORM converts them: JSON
    decoded, SQLite's booleans and UUIDs made Python's)."""
    names = tuple(names or (f.name for f in model._meta.concrete_fields))
    db = connections[DEFAULT_DB_ALIAS]  # once: each ``connection.x`` looks the wrapper up
    values = []
    for (col, converters), value in zip(_converters(model, names, db.vendor), row, strict=True):
        for convert in converters:
            value = convert(value, col, db)
        values.append(value)
    return values


def from_row(model: type[M], row: Sequence[Any]) -> M:
    """An instance of the model from a row of its concrete fields' columns, in order."""
    names, _sql = columns(model, "")
    return model.from_db(connection.alias, names, db_values(model, row))
