"""What the sample list page draws of its layout: the columns, the page size and the open
view from its URL (``columns``, ``page_size``, ``view``), the column chooser and the views."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.translation import gettext as _

from annotation.models import Dataset
from annotation.saved_views import columns as list_columns
from annotation.saved_views.query import filter_query
from annotation.saved_views.selectors import ListLayout, sample_list_layout
from core.roles import is_lead

# An id longer than this is no view's (and would not fit the column).
_ID_DIGITS = 12


@dataclass(frozen=True)
class PageLayout:
    columns: tuple[str, ...]
    page_size: int
    query: str  # the list's own parameters its pages keep
    context: dict[str, Any]  # for the template


def _problems(exc: ValidationError) -> dict[str, str]:
    return {key: " ".join(messages) for key, messages in exc.message_dict.items()}


def page_layout(request: HttpRequest, dataset: Dataset) -> PageLayout:
    """The sample list's layout for this request; what of the URL's ``columns``,
    ``page_size`` and ``view`` could not be used is left out and said on the page."""
    problems: dict[str, str] = {}
    columns: tuple[str, ...] | None = None
    page_size: int | None = None
    if "columns" in request.GET:
        try:
            columns = list_columns.columns_clean(request.GET.getlist("columns"))
        except ValidationError as exc:
            problems.update(_problems(exc))
    if request.GET.get("page_size"):
        try:
            page_size = list_columns.page_size_clean(request.GET["page_size"])
        except ValidationError as exc:
            problems.update(_problems(exc))
    raw_view = request.GET.get("view", "").strip()
    lead = is_lead(request.user)
    layout = sample_list_layout(
        user=request.user,
        dataset=dataset,
        view_id=int(raw_view) if raw_view.isdigit() and len(raw_view) < _ID_DIGITS else None,
        columns=columns,
        page_size=page_size,
    )
    if raw_view and layout.view is None and lead:
        problems["view"] = _("No such view, or it is not shared with you.")
    kept = _kept(request, layout)
    context = _context(request, layout, lead=lead, problems=problems)
    return PageLayout(
        columns=layout.columns,
        page_size=layout.page_size,
        query=urlencode(kept),
        context={**context, "kept_params": kept},
    )


def _kept(request: HttpRequest, layout: ListLayout) -> list[tuple[str, str]]:
    """The list's own parameters that its pages and its filter form keep: the open view, and
    the columns and page size when the URL gives them."""
    keep = [("view", str(layout.view.pk))] if layout.view is not None else []
    if "columns" in request.GET:
        keep += [("columns", key) for key in layout.columns]
    if request.GET.get("page_size"):
        keep.append(("page_size", str(layout.page_size)))
    return keep


def _context(
    request: HttpRequest, layout: ListLayout, *, lead: bool, problems: dict[str, str]
) -> dict[str, Any]:
    current = filter_query(request.GET)
    view = layout.view
    return {
        "columns": dict.fromkeys(layout.columns, True),
        "shown_columns": [list_columns.BY_KEY[key] for key in layout.columns],
        "column_choices": list_columns.choices(lead=lead, shown=layout.columns),
        "page_sizes": list_columns.PAGE_SIZES,
        "page_size": layout.page_size,
        "current_query": current,
        "saved_views": layout.views,
        "open_view": view,
        "view_differs": view is not None
        and (
            view.query != current
            or tuple(view.columns) != layout.columns
            or view.page_size != layout.page_size
        ),
        "view_is_mine": view is not None and view.owner_id == request.user.pk,
        "layout_problems": problems,
    }
