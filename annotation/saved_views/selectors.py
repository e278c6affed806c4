"""Reads of the sample list's layouts and saved views."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import Q, QuerySet

from annotation.models import Dataset, SampleListLayout, SavedView
from annotation.saved_views.columns import DEFAULT_COLUMNS, DEFAULT_PAGE_SIZE, columns_shown
from core.roles import is_lead

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

    AnyUser = User | AnonymousUser


def saved_views_visible(*, user: AnyUser, dataset: Dataset) -> QuerySet[SavedView]:
    """The views of a dataset a person may open: a lead's own and every shared one (leads
    only: annotators and auditors have none), with their owners, by name."""
    if not user.is_authenticated or not is_lead(user):
        return SavedView.objects.none()
    return (
        SavedView.objects.filter(dataset=dataset)
        .filter(Q(owner_id=user.pk) | Q(shared=True))
        .select_related("owner")
        .order_by("name", "pk")
    )


def saved_view_get(*, user: AnyUser, dataset: Dataset, view_id: int) -> SavedView | None:
    """A view of the dataset this person may open, or None."""
    return saved_views_visible(user=user, dataset=dataset).filter(pk=view_id).first()


@dataclass(frozen=True)
class ListLayout:
    """What the sample list shows besides its filter: the columns, the page size, the view
    open (if any) and the views the person may open."""

    columns: tuple[str, ...]
    page_size: int
    view: SavedView | None
    views: list[SavedView]


def sample_list_layout(
    *,
    user: AnyUser,
    dataset: Dataset,
    view_id: int | None = None,
    columns: tuple[str, ...] | None = None,
    page_size: int | None = None,
) -> ListLayout:
    """The sample list's layout: ``columns`` and ``page_size`` when given (the URL's), else
    the open view's, else what the person keeps for the dataset, else the defaults.

    One query for a lead's views (the open one among them), one for the kept layout when
    neither the URL nor a view gives both.
    """
    lead = is_lead(user)
    views = list(saved_views_visible(user=user, dataset=dataset)) if lead else []
    view = next((v for v in views if v.pk == view_id), None) if view_id is not None else None
    if view is not None:
        columns = tuple(view.columns) if columns is None else columns
        page_size = view.page_size if page_size is None else page_size
    if (columns is None or page_size is None) and user.is_authenticated:
        kept = SampleListLayout.objects.filter(user_id=user.pk, dataset=dataset).first()
        if kept is not None:
            columns = tuple(kept.columns) if columns is None else columns
            page_size = kept.page_size if page_size is None else page_size
    return ListLayout(
        columns=columns_shown(DEFAULT_COLUMNS if columns is None else columns, lead=lead),
        page_size=DEFAULT_PAGE_SIZE if page_size is None else page_size,
        view=view,
        views=views,
    )
