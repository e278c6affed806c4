"""Pagination: the API's limit and offset, refusing values that are not whole numbers (DRF
falls back to the defaults silently, so a typo reads as a success), and pages whose count is
exact when the database counts it within a budget, otherwise estimated."""

from __future__ import annotations

import json
from typing import Any

import psycopg.errors
from django.core.paginator import EmptyPage, Page, Paginator
from django.db import OperationalError, connections, transaction
from django.db.models import QuerySet
from django.utils.functional import cached_property
from django.utils.translation import gettext as _
from rest_framework import pagination
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request


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

    def __init__(self, object_list: QuerySet[Any], per_page: int, *, budget_ms: int) -> None:
        super().__init__(object_list, per_page)
        self.queryset = object_list
        self.budget_ms = budget_ms
        self.estimated = False

    @cached_property
    def count(self) -> int:
        queryset = self.queryset
        try:
            with (
                transaction.atomic(using=queryset.db),
                connections[queryset.db].cursor() as cursor,
            ):
                cursor.execute(
                    "SELECT set_config('statement_timeout', %s, true)", [f"{self.budget_ms}ms"]
                )
                return queryset.count()
        except OperationalError as exc:
            if not isinstance(exc.__cause__, psycopg.errors.QueryCanceled):
                raise
        self.estimated = True
        plan = json.loads(queryset.explain(format="json"))
        rows: float = plan[0]["Plan"]["Plan Rows"]
        return max(0, round(rows))

    def validate_number(self, number: Any) -> int:
        try:
            return int(super().validate_number(number))
        except EmptyPage:
            if not self.estimated or int(number) < 1:
                raise
            return int(number)  # past the estimate's last page: the page itself tells

    def page(self, number: Any) -> Page[Any]:
        number = self.validate_number(number)
        if not self.estimated:
            return super().page(number)
        bottom = (number - 1) * self.per_page
        rows = list(self.object_list[bottom : bottom + self.per_page + 1])
        if len(rows) > self.per_page:
            self._correct(max(self.count, bottom + len(rows)), estimated=True)
        elif rows or number == 1:
            self._correct(bottom + len(rows), estimated=False)
        else:  # past the end: at most the rows before this page
            self._correct(min(self.count, bottom), estimated=True)
        return Page(rows[: self.per_page], number, self)

    def _correct(self, count: int, *, estimated: bool) -> None:
        self.__dict__["count"] = count
        self.__dict__.pop("num_pages", None)
        self.estimated = estimated
