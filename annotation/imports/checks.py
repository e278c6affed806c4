"""Checks of a parsed row that the format validation leaves out but the database would refuse."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from annotation.formats.records import ParsedSample
from annotation.models import Pipeline, SafetyLabel, Sample
from annotation.services.samples import LABEL_FIELDS, sample_size_problems
from core.limits import MAX_JSON_DEPTH, find_hostile


def _text_limits() -> dict[str, int]:
    limits: dict[str, int] = {}
    for name in ("external_id", *LABEL_FIELDS):
        limit = getattr(Sample._meta.get_field(name), "max_length", None)
        if isinstance(limit, int):
            limits[name] = limit
    return limits


_TEXT_LIMITS = _text_limits()
_LIST_OF_TEXT = ("generator_models", "predicate")
_SAFETY_LABELS = frozenset(SafetyLabel.values)
_PIPELINES = frozenset(Pipeline.values)
_TEXT_FIELDS = ("external_id", *LABEL_FIELDS)
# The fields without a column length of their own: SAMPLE_MAX_TEXT_CHARS limits them.
_UNBOUNDED = tuple(name for name in LABEL_FIELDS if name not in _TEXT_LIMITS)


def _has_nul(value: Any) -> bool:
    """Whether a value holds a NUL character, which PostgreSQL refuses in text and JSON
    (core.limits: iterative, so any depth is safe)."""
    found = find_hostile(value, max_depth=sys.maxsize)
    return found is not None and found.kind == "nul"


def _texts_json(parsed: ParsedSample) -> str | None:
    """The row's text fields as one JSON text (None when a value JSON cannot hold): one C
    call that tells, for most rows, that no NUL and no over-long field is among them."""
    try:
        return json.dumps([getattr(parsed, name) for name in _TEXT_FIELDS])
    except (TypeError, ValueError, RecursionError):
        return None


def shape_problems(parsed: ParsedSample) -> list[str]:
    """Problems that validation does not look for but the database would refuse."""
    problems: list[str] = []
    if not isinstance(parsed.options, list) or not all(
        isinstance(o, dict)
        and isinstance(o.get("label", ""), str)
        and isinstance(o.get("text", ""), str)
        for o in parsed.options
    ):
        problems.append(_("the options are not a list of {label, text} entries"))
    for name in _LIST_OF_TEXT:
        value = getattr(parsed, name)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(_("'%(field)s' is not a list of texts") % {"field": name})
    if not isinstance(parsed.extra, dict):
        problems.append(_("'extra' is not a JSON object"))
    for name, limit in _TEXT_LIMITS.items():
        value = getattr(parsed, name)
        if isinstance(value, str) and len(value) > limit:
            problems.append(
                _("'%(field)s' is longer than %(limit)s characters")
                % {"field": name, "limit": limit}
            )
    texts = _texts_json(parsed)
    try:
        extra: str | None = json.dumps(parsed.extra)
    except (TypeError, ValueError, RecursionError):
        extra = None
    # A row whose texts and extra together are within the limit has no field past it.
    if texts is None or extra is None or len(texts) + len(extra) > settings.SAMPLE_MAX_TEXT_CHARS:
        problems += sample_size_problems(
            {name: getattr(parsed, name) for name in _UNBOUNDED},
            extra=parsed.extra if isinstance(parsed.extra, dict) else None,
        )
    if parsed.safety_label not in _SAFETY_LABELS:
        problems.append(
            _("the safety label '%(label)s' is not 'safe' or 'unsafe'")
            % {"label": parsed.safety_label}
        )
    if parsed.pipeline not in _PIPELINES:
        problems.append(_("unknown pipeline '%(pipeline)s'") % {"pipeline": parsed.pipeline})
    if not problems:
        # The readers refused rows nested past MAX_JSON_DEPTH; a value built deeper still
        # is refused here rather than raising.
        if extra is None:
            try:
                json.dumps(parsed.extra)
            except RecursionError:
                problems.append(
                    _("'extra' is nested more than %(depth)s levels deep")
                    % {"depth": MAX_JSON_DEPTH}
                )
            except (TypeError, ValueError):
                problems.append(_("'extra' holds values that are not JSON"))
        # JSON escapes every NUL as \\u0000: texts whose JSON lacks it need no walk.
        elif (texts is None or "\\u0000" in texts or "\\u0000" in extra) and (
            any(_has_nul(getattr(parsed, name)) for name in _TEXT_FIELDS) or _has_nul(parsed.extra)
        ):
            problems.append(_("the record contains a NUL character"))
    return problems
