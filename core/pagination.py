"""The API's pagination: DRF's limit and offset, refusing values that are not whole numbers
(DRF falls back to the defaults silently, so a typo reads as a success)."""

from __future__ import annotations

from typing import Any

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
