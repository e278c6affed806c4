"""DRF's content negotiation with a shortcut for the common request that states no preference.

An API client that sends no ``Accept`` header, ``*/*`` or ``application/json`` (and asks for no
``?format=``) gets the first renderer, JSON, as DRF's negotiation would answer after parsing
and ranking the header's media types: the review loop's calls skip that work. Anything else
(a browser's list of types, a format override) goes through DRF's own negotiation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

_JSON = "application/json"
_PLAIN = frozenset({"*/*", _JSON})


class ContentNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[Any, str]:
        first = next(iter(renderers), None)  # DRF passes the view's list
        if (
            first is not None
            and not format_suffix
            and first.media_type == _JSON
            and request.META.get("HTTP_ACCEPT", "*/*").strip() in _PLAIN
            and self.settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return first, _JSON
        renderer, media_type = super().select_renderer(request, renderers, format_suffix)
        return renderer, media_type
