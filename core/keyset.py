"""Keyset pages: a page of an ordered queryset found from the row next to it, so that a deep
page costs what the first one does (an OFFSET reads and drops every row before it).

The order is a few columns of the model, all ascending or all descending, ending with the
primary key (which breaks ties); with an index on the filter's equality columns followed by
those columns, a page is one index range scan of the rows it shows, as
``(col, id) > (value, id)`` (a row comparison, an index condition for PostgreSQL).

A ``Cursor`` says where a page starts: after a row (the next page), before a row (the
previous page) or from the end (the last page, the order reversed). It is signed (Django's
``signing``) and names the order it was made under, so that a cursor that was tampered with,
is garbage or belongs to another order is told apart (``BadCursor``) from a good one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.core import signing
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db.models import BooleanField, Expression, F, Field, Model, QuerySet, Value
from django.db.models.sql.compiler import SQLCompiler
from django.utils.translation import gettext as _

_SALT = "core.keyset.cursor"
_M = TypeVar("_M", bound=Model)


class BadCursor(ValueError):
    """A cursor that cannot be used: not one of ours, altered, or made under another order."""


class RowComparison(Expression):
    """``(a, b, …) <operator> (x, y, …)`` over columns of the queryset's model and values of
    their fields' types: one condition the database can start an index scan from."""

    def __init__(
        self,
        columns: Sequence[str],
        values: Sequence[Any],
        fields: Sequence[Field[Any, Any]],
        op: str,
    ) -> None:
        super().__init__(output_field=BooleanField())
        if op not in ("<", ">") or not (len(columns) == len(values) == len(fields) > 0):
            raise ValueError("a row comparison needs as many values as columns, and < or >")
        self.left: list[Any] = [F(column) for column in columns]
        self.right: list[Any] = [
            Value(value, output_field=field) for value, field in zip(values, fields, strict=True)
        ]
        self.op = op

    def get_source_expressions(self) -> list[Any]:
        return [*self.left, *self.right]

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        n = len(self.left)
        self.left, self.right = list(exprs[:n]), list(exprs[n:])

    def as_sql(self, compiler: SQLCompiler, connection: Any) -> tuple[str, list[Any]]:
        sides: list[str] = []
        params: list[Any] = []
        for side in (self.left, self.right):
            parts = []
            for expression in side:
                sql, part_params = compiler.compile(expression)
                parts.append(sql)
                params.extend(part_params)
            sides.append(f"({', '.join(parts)})")
        return f"{sides[0]} {self.op} {sides[1]}", params


@dataclass(frozen=True)
class Cursor:
    """Where a page starts: after the row whose order values are ``values`` (``before``
    False), before it (True), or, with ``values`` None and ``before`` True, from the end."""

    order: tuple[str, ...]
    values: tuple[Any, ...] | None
    before: bool

    def encode(self) -> str:
        return signing.Signer(salt=_SALT).sign_object(
            [list(self.order), None if self.values is None else list(self.values), self.before]
        )

    @classmethod
    def after(cls, order: Sequence[str], row: Model) -> Cursor:
        """The cursor of the page after ``row`` under ``order``."""
        fields = order_fields(type(row), order)
        return cls(tuple(order), tuple(_json(getattr(row, f.attname)) for f in fields), False)

    @classmethod
    def decode(cls, token: str, *, order: Sequence[str], model: type[Model]) -> Cursor:
        """The cursor ``token`` stands for, under ``order`` (its values read as the columns'
        types), or BadCursor saying why it cannot be used."""
        try:
            raw = signing.Signer(salt=_SALT).unsign_object(token)
        except (signing.BadSignature, ValueError, UnicodeError):
            raise BadCursor(_("This page link is not valid (it was changed or cut).")) from None
        if not (isinstance(raw, list) and len(raw) == 3 and isinstance(raw[2], bool)):
            raise BadCursor(_("This page link is not valid (it was changed or cut)."))
        made_under, values, before = raw
        if made_under != list(order):
            raise BadCursor(_("This page link belongs to another sort order."))
        if values is None:
            if not before:
                raise BadCursor(_("This page link is not valid (it was changed or cut)."))
            return cls(order=tuple(order), values=None, before=True)
        fields = order_fields(model, order)
        if not isinstance(values, list) or len(values) != len(fields):
            raise BadCursor(_("This page link is not valid (it was changed or cut)."))
        try:
            typed = tuple(field.to_python(v) for field, v in zip(fields, values, strict=True))
        except (ValidationError, TypeError, ValueError):
            raise BadCursor(_("This page link is not valid (it was changed or cut).")) from None
        if any(v is None for v in typed):
            raise BadCursor(_("This page link is not valid (it was changed or cut)."))
        return cls(order=tuple(order), values=typed, before=before)


def order_fields(model: type[Model], order: Sequence[str]) -> list[Field[Any, Any]]:
    """The model fields of an order's columns (``-`` prefixes allowed)."""
    try:
        return [model._meta.get_field(column.removeprefix("-")) for column in order]  # type: ignore[misc]
    except FieldDoesNotExist as exc:
        raise ValueError(f"not a column of {model.__name__}: {exc}") from exc


def _descending(order: Sequence[str]) -> bool:
    directions = {column.startswith("-") for column in order}
    if len(directions) != 1 or order[-1].removeprefix("-") not in ("id", "pk"):
        raise ValueError(f"a keyset order is all one direction and ends with the key: {order}")
    return directions == {True}


def _json(value: Any) -> Any:
    """A column's value as the cursor keeps it (JSON: datetimes as ISO 8601 text)."""
    return value if isinstance(value, int | str) else value.isoformat()


@dataclass
class KeysetPage(Generic[_M]):
    """One page of rows (``object_list``), with the cursors of the pages beside it."""

    object_list: list[_M]
    next_cursor: Cursor | None
    previous_cursor: Cursor | None
    # The first page (no cursor) and the last one (from the end), whatever else they are.
    is_first: bool
    is_last: bool
    paginator: Any = None  # what counts the rows, for a page that says how many
    keyset = True

    @property
    def number(self) -> int | None:
        """1 on the first page, the last page's number on the last one (its paginator
        counting), otherwise not known."""
        if self.is_first:
            return 1
        if self.is_last and self.paginator is not None:
            return int(self.paginator.num_pages)
        return None

    def has_next(self) -> bool:
        return self.next_cursor is not None

    def has_previous(self) -> bool:
        return self.previous_cursor is not None

    @property
    def next_token(self) -> str:
        return self.next_cursor.encode() if self.next_cursor else ""

    @property
    def previous_token(self) -> str:
        return self.previous_cursor.encode() if self.previous_cursor else ""


def keyset_page(
    queryset: QuerySet[_M], *, order: Sequence[str], cursor: Cursor | None, per_page: int
) -> KeysetPage[_M]:
    """The page of ``queryset`` (filtered, in any order: ``order`` replaces it) that
    ``cursor`` points to, or the first page without one: one query of ``per_page + 1`` rows
    at most (the one more tells whether another page follows). Walking back from the last page
    (the order reversed), the pages hold the same rows as walking on from the first does, cut
    elsewhere: the earliest may be short."""
    order = tuple(order)
    descending = _descending(order)
    if cursor is not None and cursor.order != order:
        raise BadCursor(_("This page link belongs to another sort order."))
    fields = order_fields(queryset.model, order)
    names = [column.removeprefix("-") for column in order]
    backwards = cursor is not None and cursor.before
    scan = tuple(f"{'' if descending else '-'}{n}" for n in names) if backwards else order
    rows = queryset
    if cursor is not None and cursor.values is not None:
        # Forwards: past the row in the order's direction; backwards, the other way.
        op = ">" if descending == backwards else "<"
        rows = rows.filter(RowComparison(names, cursor.values, fields, op))
    found = list(rows.order_by(*scan)[: per_page + 1])
    more = len(found) > per_page
    found = found[:per_page]
    if backwards:
        found.reverse()
    values = [tuple(_json(getattr(row, f.attname)) for f in fields) for row in found]
    if backwards:
        following = cursor is not None and cursor.values is not None
        after = Cursor(order, values[-1], before=False) if found and following else None
        before = Cursor(order, values[0], before=True) if more else None
    else:
        after = Cursor(order, values[-1], before=False) if more else None
        before = Cursor(order, values[0], before=True) if found and cursor is not None else None
    return KeysetPage(
        object_list=found,
        next_cursor=after,
        previous_cursor=before,
        is_first=cursor is None,
        is_last=cursor is not None and cursor.values is None,
    )
