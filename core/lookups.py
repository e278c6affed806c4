"""``column = ANY(%s)``: a filter on a list of values sent as one array parameter.

Django's ``__in`` writes one placeholder per value: a statement whose text changes with the
length of the list (so never the same prepared statement twice), with one parameter per value
(PostgreSQL takes at most 65,535), each adapted by psycopg in Python. ``AnyOf(F("sha256"),
hashes)`` sends the list as one array literal, a single text parameter, and matches no row for
an empty list, as ``__in`` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Lookup
from django.db.models.sql.compiler import SQLCompiler


def _array_literal(values: list[Any]) -> tuple[str, str] | None:
    """A list of texts or integers as a PostgreSQL array literal and its type: one string
    parameter, which psycopg quotes in C (it adapts a list element by element in Python)."""
    if all(type(v) is str for v in values):
        quoted = (v.replace("\\", "\\\\").replace('"', '\\"') for v in values)
        return "text[]", "{" + ",".join(f'"{v}"' for v in quoted) + "}"
    if all(type(v) is int for v in values):
        return "bigint[]", "{" + ",".join(map(str, values)) + "}"
    return None


class AnyOf(Lookup):  # type: ignore[type-arg]
    """``AnyOf(F("field"), values)``, used as a filter: the field is one of the values."""

    lookup_name = "any_of"
    prepare_rhs = False

    def __init__(self, lhs: Any, rhs: Iterable[Any]) -> None:
        super().__init__(lhs, list(rhs))

    def as_sql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper
    ) -> tuple[str, tuple[Any, ...]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        values: list[Any] = self.rhs
        if not values:
            raise EmptyResultSet
        literal = _array_literal(values)
        if literal is not None:
            return f"{lhs} = ANY(%s::{literal[0]})", (*lhs_params, literal[1])
        return f"{lhs} = ANY(%s)", (*lhs_params, values)
