"""The filter and sort of a sample list URL as a query string, the way views keep it.

The filter is opaque here: a view keeps the list's own parameters as they were given, and only
checks them against the filter's definition (``annotation/sample_filters.py``) through
``filter_parameters`` and ``_filter_problems``, the two places that know it.
"""

from __future__ import annotations

from dataclasses import fields
from urllib.parse import urlencode

from django.core.exceptions import ValidationError
from django.http import QueryDict
from django.utils.translation import gettext as _

from annotation.models.saved_views import QUERY_MAX
from annotation.sample_filters import SampleFilter

# The list page's own parameters: never part of a view's filter.
PAGE_PARAMETERS = frozenset({"page", "view", "columns", "page_size"})


def filter_parameters() -> frozenset[str]:
    """The names of the sample list's filter and sort parameters."""
    names = {"status" if f.name == "statuses" else f.name for f in fields(SampleFilter)}
    return frozenset(names - {"problems"})


def _filter_problems(params: QueryDict) -> dict[str, str]:
    """What the filter could not use in these parameters, by parameter name."""
    return dict(SampleFilter.from_params(params).problems)


def filter_query(params: QueryDict) -> str:
    """The filter and sort part of a list URL's parameters as a query string: known names
    only, empty values left out, in the order given (so the same form gives the same string)."""
    known = filter_parameters()
    pairs = [
        (key, value.strip())
        for key, values in params.lists()
        if key in known
        for value in values
        if value.strip()
    ]
    return urlencode(pairs)


def query_clean(raw: str) -> str:
    """A filter and sort to keep in a view, tidied as ``filter_query`` does; a ValidationError
    says what is wrong: too long, a parameter the list does not know, or a value its filter
    cannot use."""
    text = raw.strip().removeprefix("?")
    if len(text) > QUERY_MAX:
        raise ValidationError(
            {"query": _("Keep the filter under %(n)d characters.") % {"n": QUERY_MAX}},
            code="query_too_long",
        )
    params = QueryDict(text)
    known = filter_parameters()
    unknown = [key for key in params if key not in known]
    if unknown:
        raise ValidationError(
            {
                "query": _("Unknown filter “%(name)s” (known: %(known)s).")
                % {"name": unknown[0][:50], "known": ", ".join(sorted(known))}
            },
            code="unknown_parameter",
        )
    problems = _filter_problems(params)
    if problems:
        name, problem = next(iter(problems.items()))
        raise ValidationError(
            {"query": _("Filter “%(name)s”: %(problem)s") % {"name": name, "problem": problem}},
            code="bad_value",
        )
    return filter_query(params)
