"""The sample list's forms for its layout and saved views: keep my columns and page size;
save, update and delete a view (leads). Each answers with the list, or a 400 that says what
was wrong."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.lookups import dataset_or_404
from annotation.models import Dataset, SavedView
from annotation.models.saved_views import QUERY_MAX
from annotation.saved_views import selectors, services
from annotation.saved_views.query import query_clean
from core.roles import is_lead, request_user


def list_url(dataset_id: int, query: str, **extra: object) -> str:
    """The sample list with a filter (a query string) and the list's own parameters."""
    more = urlencode([(k, v) for k, v in extra.items() if v not in (None, "")], doseq=True)
    tail = "&".join(part for part in (query, more) if part)
    url = reverse("annotation:sample_list", args=[dataset_id])
    return f"{url}?{tail}" if tail else url


def _refused(
    request: HttpRequest, dataset: Dataset, exc: ValidationError, query: str
) -> HttpResponse:
    back = list_url(dataset.pk, query if len(query) <= QUERY_MAX else "")
    return render(
        request,
        "annotation/saved_view_refused.html",
        {"dataset": dataset, "problems": exc.messages, "back": back},
        status=400,
    )


def _require_lead(request: HttpRequest) -> None:
    if not is_lead(request.user):
        raise PermissionDenied(_("Only project leads keep views of the sample list."))


def _view(request: HttpRequest, dataset: Dataset, view_id: int) -> SavedView:
    view = selectors.saved_view_get(user=request.user, dataset=dataset, view_id=view_id)
    if view is None:
        raise Http404(_("No such view."))
    return view


def _name(request: HttpRequest) -> str:
    return request.POST.get("name", "")


def _shared(request: HttpRequest) -> bool:
    return request.POST.get("shared") == "1"


@require_POST
def sample_list_layout(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Keep the columns and page size chosen; back to the list, with the open view kept
    (the columns chosen then stand in for the view's, until it is updated)."""
    dataset = dataset_or_404(request, dataset_id)
    user = request_user(request)
    query = request.POST.get("query", "")
    try:
        query = query_clean(query)
        layout = services.sample_list_layout_keep(
            user=user,
            dataset=dataset,
            columns=request.POST.getlist("columns"),
            page_size=request.POST.get("page_size", ""),
        )
    except ValidationError as exc:
        return _refused(request, dataset, exc, query)
    view = request.POST.get("view", "")
    if view.isdigit() and is_lead(user):
        return redirect(
            list_url(
                dataset.pk,
                query,
                view=view,
                columns=layout.columns,
                page_size=layout.page_size,
            )
        )
    return redirect(list_url(dataset.pk, query))


@require_POST
def saved_view_create(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Save the list as it shows (filter, sort, columns, page size) as a new view; open it."""
    _require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    query = request.POST.get("query", "")
    try:
        view = services.saved_view_create(
            dataset=dataset,
            owner=request_user(request),
            name=_name(request),
            shared=_shared(request),
            query=query,
            columns=request.POST.getlist("columns"),
            page_size=request.POST.get("page_size", ""),
        )
    except ValidationError as exc:
        return _refused(request, dataset, exc, query)
    messages.success(request, _("View “%(name)s” saved.") % {"name": view.name})
    return redirect(list_url(dataset.pk, view.query, view=view.pk))


@require_POST
def saved_view_update(request: HttpRequest, dataset_id: int, view_id: int) -> HttpResponse:
    """Replace the open view with the list as it shows (its owner only)."""
    _require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    view = _view(request, dataset, view_id)
    query = request.POST.get("query", "")
    try:
        services.saved_view_update(
            view=view,
            by=request_user(request),
            name=_name(request),
            shared=_shared(request),
            query=query,
            columns=request.POST.getlist("columns"),
            page_size=request.POST.get("page_size", ""),
        )
    except ValidationError as exc:
        return _refused(request, dataset, exc, query)
    messages.success(request, _("View “%(name)s” updated.") % {"name": view.name})
    return redirect(list_url(dataset.pk, view.query, view=view.pk))


@require_POST
def saved_view_delete(request: HttpRequest, dataset_id: int, view_id: int) -> HttpResponse:
    """Delete a view (its owner only); the list keeps the filter it showed."""
    _require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    view = _view(request, dataset, view_id)
    name, query = view.name, view.query
    services.saved_view_delete(view=view, by=request_user(request))
    messages.success(request, _("View “%(name)s” deleted.") % {"name": name})
    return redirect(list_url(dataset.pk, query))
