"""The API's request parsers: a body the database or Python cannot take is a 400, never a 500.

Set as DRF's DEFAULT_PARSER_CLASSES. JSON bodies larger than DATA_UPLOAD_MAX_MEMORY_SIZE,
nested deeper than MAX_JSON_DEPTH or holding a NUL character anywhere (PostgreSQL stores NUL
in neither text nor JSON) are refused with a message; so are form and multipart fields and
file names holding NUL. Views that choose their parsers take them from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.http import QueryDict
from django.utils.translation import gettext as _
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils import json

from core.limits import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from core.limits import find_hostile


def too_large_message() -> str:
    return _("The request body is larger than %(limit)s bytes; send less at a time.") % {
        "limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    }


def _nul_error() -> ParseError:
    return ParseError(
        _("The request holds a NUL character (\\u0000), which cannot be stored; remove it.")
    )


def check_json_value(value: Any, max_depth: int = MAX_JSON_DEPTH) -> None:
    """ParseError when a parsed JSON value nests deeper than `max_depth` containers or holds a
    NUL character in any string or key (core.limits, which every import's rows obey too)."""
    found = find_hostile(value, max_depth=max_depth)
    if found is None:
        return
    if found.kind == "nul":
        raise _nul_error()
    raise ParseError(
        _("The JSON is nested more than %(depth)s levels deep.") % {"depth": max_depth}
    )


def _read_limited(stream: Any) -> bytes:
    """The body, refused past DATA_UPLOAD_MAX_MEMORY_SIZE (DRF reads it through Django's
    request.body, which checks too: core.api turns that refusal into the same 400)."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    raw: bytes = stream.read() if limit is None else stream.read(limit + 1)
    if limit is not None and len(raw) > limit:
        raise ParseError(too_large_message())
    return raw


def _encoding(parser_context: Mapping[str, Any] | None) -> str:
    return str((parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET)


def _check_form(data: Mapping[str, Any]) -> None:
    lists = data.lists() if isinstance(data, QueryDict) else ((k, [v]) for k, v in data.items())
    for key, values in lists:
        if "\x00" in key or any(isinstance(v, str) and "\x00" in v for v in values):
            raise _nul_error()


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser with limits on size and depth, and no NUL characters."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = _read_limited(stream)
        try:
            text = raw.decode(_encoding(parser_context))
        except (LookupError, UnicodeDecodeError) as exc:
            message = _("The JSON is not valid text (%(detail)s).") % {"detail": exc}
            raise ParseError(message) from exc
        try:
            data = json.loads(text, parse_constant=json.strict_constant if self.strict else None)
        except RecursionError as exc:
            raise ParseError(
                _("The JSON is nested more than %(depth)s levels deep.") % {"depth": MAX_JSON_DEPTH}
            ) from exc
        except ValueError as exc:
            raise ParseError(_("The JSON cannot be read: %(detail)s") % {"detail": exc}) from exc
        check_json_value(data)
        return data


class FormParser(parsers.FormParser):
    """DRF's form parser with the size limit, and no NUL characters."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        data = QueryDict(_read_limited(stream), encoding=_encoding(parser_context))
        _check_form(data)
        return data


class MultiPartParser(parsers.MultiPartParser):
    """DRF's multipart parser (Django enforces its limits), refusing NUL in fields and file
    names; file contents are left alone."""

    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Any = None
    ) -> parsers.DataAndFiles[Any, Any]:
        result = super().parse(stream, media_type, parser_context)
        _check_form(result.data)
        for upload in result.files.values():
            if "\x00" in str(getattr(upload, "name", "") or ""):
                raise _nul_error()
        return result
