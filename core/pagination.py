"""Pagination: the API's limit and offset, refusing values that are not whole numbers (DRF
falls back to the defaults silently, so a typo reads as a success), and pages whose count is
exact when the database counts it within a budget, otherwise estimated."""

from __future__ import annotations

import json
from typing import Any

import psycopg.errors
from django.core.exceptions import EmptyResultSet
from django.core.paginator import EmptyPage, Page, Paginator
from django.db import OperationalError, connections, transaction
from django.db.models import QuerySet
from django.db.models.query import EmptyQuerySet
from django.utils.functional import cached_property
from django.utils.translation import gettext as _
from rest_framework import pagination
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.utils.urls import remove_query_param, replace_query_param

from core.keyset import BadCursor, Cursor, KeysetPage, keyset_page


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    """``?limit=`` (1 up to ``max_limit``, by default the page size) and ``?offset=`` (0 or
    more) as whole numbers, or a 400 naming the parameter; the schema states the bounds."""

    max_limit = 1000

    def _read(self, request: Request, name: str, minimum: int) -> int | None:
        values = request.query_params.getlist(name)
        if not values:
            return None
        try:
            if len(values) != 1:
                raise ValueError
            value = int(values[0])
        except ValueError:
            raise ValidationError({name: [_("A whole number, given once.")]}) from None
        if value < minimum or (name == self.limit_query_param and value > self.max_limit):
            raise ValidationError(
                {
                    name: [
                        _("Between %(low)d and %(high)d.")
                        % {"low": minimum, "high": self.max_limit}
                        if name == self.limit_query_param
                        else _("%(low)d or more.") % {"low": minimum}
                    ]
                }
            )
        return value

    def get_limit(self, request: Request) -> int | None:
        limit = self._read(request, self.limit_query_param, 1)
        return self.default_limit if limit is None else limit

    def get_offset(self, request: Request) -> int:
        offset = self._read(request, self.offset_query_param, 0)
        return 0 if offset is None else offset

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters: list[dict[str, Any]] = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.limit_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_limit)
            elif parameter["name"] == self.offset_query_param:
                parameter["schema"].update(minimum=0)
        return parameters


class _Counted(Exception):  # how the count leaves its transaction (rolled back)
    def __init__(self, rows: int) -> None:
        super().__init__(rows)
        self.rows = rows


class CountWithinBudget(Paginator[Any]):
    """A page's paginator whose count is exact when the database counts the queryset within
    ``budget_ms``, otherwise the planner's estimate of its rows (``estimated`` is then True, for
    the page to say "about"): a count that would have to read much of a large table never
    holds the page up longer than the budget. The budget is the statement's own
    ``statement_timeout``, set for the count alone in a transaction (a savepoint inside one).

    An estimate never cuts a page short nor refuses a page number: with an estimated count a
    page reads one row more than it shows, so that it holds every row there is up to its size
    and knows whether another page follows; the count is then corrected by what was read (exact
    once a page ends before its size, at least the rows read when more follow)."""

    def __init__(
        self,
        object_list: QuerySet[Any],
        per_page: int,
        *,
        budget_ms: int,
        exact_below: int | None = None,
    ) -> None:
        super().__init__(object_list, per_page)
        self.queryset = object_list
        self.budget_ms = budget_ms
        self.exact_below = exact_below
        self.estimated = False

    def _estimate(self) -> int:
        try:
            plan = json.loads(self.queryset.explain(format="json"))
        except EmptyResultSet:  # a condition that matches nothing (an empty IN list)
            return 0
        rows: float = plan[0]["Plan"]["Plan Rows"]
        return max(0, round(rows))

    @cached_property
    def count(self) -> int:
        queryset = self.queryset
        if isinstance(queryset, EmptyQuerySet):
            return 0  # none(): nothing to ask the database
        estimate: int | None = None
        if self.exact_below is not None:
            # The planner first: where it expects this many rows or more, counting them would
            # read as many index entries on every request (a million samples: the budget spent
            # in vain), so its estimate is the count.
            estimate = self._estimate()
            if estimate >= self.exact_below:
                self.estimated = True
                return estimate
        try:
            # Rolled back, not released: the timeout is the count's alone, also inside an outer
            # transaction (a savepoint's release would leave it set until that one ends).
            with (
                transaction.atomic(using=queryset.db),
                connections[queryset.db].cursor() as cursor,
            ):
                cursor.execute(
                    "SELECT set_config('statement_timeout', %s, true)", [f"{self.budget_ms}ms"]
                )
                raise _Counted(queryset.count())
        except _Counted as counted:
            return counted.rows
        except OperationalError as exc:
            if not isinstance(exc.__cause__, psycopg.errors.QueryCanceled):
                raise
        self.estimated = True
        return self._estimate() if estimate is None else estimate  # asked once at most

    def validate_number(self, number: Any) -> int:
        try:
            return int(super().validate_number(number))
        except EmptyPage:
            if not self.estimated or int(number) < 1:
                raise
            return int(number)  # past the estimate's last page: the page itself tells

    def page(self, number: Any) -> Page[Any]:
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        if not self.estimated:
            top = min(bottom + self.per_page, self.count)
            return Page(list(rows_at(self.queryset, bottom, top)), number, self)
        rows = list(rows_at(self.queryset, bottom, bottom + self.per_page + 1))
        if len(rows) > self.per_page:
            self._correct(max(self.count, bottom + len(rows)), estimated=True)
        elif rows or number == 1:
            self._correct(bottom + len(rows), estimated=False)
        else:  # past the end: at most the rows before this page
            self._correct(min(self.count, bottom), estimated=True)
        return Page(rows[: self.per_page], number, self)

    def correct_by(self, page: KeysetPage[Any]) -> None:
        """Correct an estimated count by what a keyset page of the same rows read: the first
        page with none after it, or the last with none before it, holds every row, so the
        count is exact; any other page holds at least its rows, and one more on each side
        where a page follows or precedes it (still an estimate). An exact count stays."""
        if not self.estimated:
            return
        rows = len(page.object_list)
        if (page.is_first and not page.has_next()) or (page.is_last and not page.has_previous()):
            self._correct(rows, estimated=False)
        else:
            beside = int(page.has_next()) + int(page.has_previous())
            self._correct(max(self.count, rows + beside), estimated=True)

    def _correct(self, count: int, *, estimated: bool) -> None:
        self.__dict__["count"] = count
        self.__dict__.pop("num_pages", None)
        self.estimated = estimated


# From this offset on, rows_at finds the rows' keys first (an index-only scan where an index
# holds the filter's and the order's columns) and then reads only those rows.
DEFERRED_FROM = 1000


def rows_at(queryset: QuerySet[Any], bottom: int, top: int) -> QuerySet[Any]:
    """The rows ``bottom`` (included) to ``top`` (excluded) of an ordered queryset. A deep
    offset reads and drops every row before it; from ``DEFERRED_FROM`` on it drops only their
    keys: the rows' primary keys in the order, sliced, then those rows in the same order (a
    "deferred join", one statement)."""
    if bottom < DEFERRED_FROM:
        return queryset[bottom:top]
    keys = queryset.values("pk")[bottom:top]
    return queryset.filter(pk__in=keys)


class KeysetOrOffsetPagination(LimitOffsetPagination):
    """The API's pages of a long list: ``?limit=&offset=`` as before, and ``?cursor=`` (the
    ``next`` and ``previous`` links carry one): a keyset page, found from the row beside it,
    whose cost does not grow with its depth, where an offset reads every row before it.

    ``next`` is always a cursor link, ``previous`` one on a cursor's page (an offset link on
    an offset's page, as before). ``count`` is exact when the database counts within
    ``count_budget_ms`` and the planner expects fewer than ``exact_below`` rows, otherwise the
    planner's estimate, with ``count_estimated`` true. A cursor that was altered, is not one,
    or was made under another ``ordering`` is a 400 naming ``cursor``.

    The view gives the order (all one direction, ending with ``id``) as ``keyset_order``."""

    cursor_query_param = "cursor"
    count_budget_ms = 60
    exact_below = 100_000

    def paginate_queryset(
        self, queryset: QuerySet[Any], request: Request, view: Any = None
    ) -> list[Any]:
        self.request = request
        limit = self.get_limit(request) or self.default_limit or 50
        self.limit = limit
        order = tuple(getattr(view, "keyset_order", ()) or ("id",))
        tokens = request.query_params.getlist(self.cursor_query_param)
        counter = CountWithinBudget(
            queryset, limit, budget_ms=self.count_budget_ms, exact_below=self.exact_below
        )
        self.keyset: KeysetPage[Any] | None = None
        if tokens:
            if len(tokens) != 1 or self.offset_query_param in request.query_params:
                raise ValidationError(
                    {self.cursor_query_param: [_("One cursor, and no offset with it.")]}
                )
            try:
                cursor = Cursor.decode(tokens[0], order=order, model=queryset.model)
            except BadCursor as exc:
                raise ValidationError({self.cursor_query_param: [str(exc)]}) from None
            self.keyset = keyset_page(queryset, order=order, cursor=cursor, per_page=limit)
            self.count, self.estimated = counter.count, counter.estimated
            self.offset = 0
            return self.keyset.object_list
        self.offset = self.get_offset(request)
        self.count, self.estimated = counter.count, counter.estimated
        if not self.estimated and self.count <= self.offset:
            rows = []  # nothing there: no page to read
        else:
            rows = list(rows_at(queryset, self.offset, self.offset + limit + 1))
        more = len(rows) > limit
        rows = rows[:limit]
        if self.estimated and not more and (rows or self.offset == 0):
            self.count, self.estimated = self.offset + len(rows), False  # it ends here
        elif self.estimated and more:
            self.count = max(self.count, self.offset + len(rows) + 1)
        self.next_cursor = Cursor.after(order, rows[-1]) if more else None
        return rows

    def _cursor_link(self, cursor: Cursor | None) -> str | None:
        if cursor is None:
            return None
        assert self.request is not None
        url = remove_query_param(self.request.build_absolute_uri(), self.offset_query_param)
        return replace_query_param(url, self.cursor_query_param, cursor.encode())

    def get_next_link(self) -> str | None:
        if self.keyset is not None:
            return self._cursor_link(self.keyset.next_cursor)
        return self._cursor_link(self.next_cursor)

    def get_previous_link(self) -> str | None:
        if self.keyset is not None:
            return self._cursor_link(self.keyset.previous_cursor)
        link: str | None = super().get_previous_link()
        return link

    def get_paginated_response(self, data: Any) -> Any:
        from rest_framework.response import Response

        return Response(
            {
                "count": self.count,
                "count_estimated": self.estimated,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = super().get_paginated_response_schema(schema)
        answer["properties"]["count"]["description"] = (
            "The matching rows: exact, or the planner's estimate when count_estimated"
        )
        answer["properties"]["count_estimated"] = {"type": "boolean", "example": False}
        answer["properties"]["next"]["description"] = "The next page: a cursor link"
        answer["required"] = [*answer.get("required", []), "count_estimated"]
        return answer

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        parameters.append(
            {
                "name": self.cursor_query_param,
                "required": False,
                "in": "query",
                "description": "Where a page starts, from a next or previous link (deep pages "
                "cost what the first one does, where an offset reads every row before it); "
                "not with offset. One altered, or made under another ordering, is a 400",
                "schema": {"type": "string"},
            }
        )
        return parameters
