"""Writes of the sample list's layouts and saved views: every value checked here, so the page
and any later API refuse the same input with the same message."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from annotation.models import Dataset, SampleListLayout, SavedView
from annotation.models.saved_views import NAME_MAX
from annotation.saved_views.columns import columns_clean, page_size_clean
from annotation.saved_views.query import query_clean
from core.roles import is_lead

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def sample_list_layout_keep(
    *, user: User, dataset: Dataset, columns: Iterable[str], page_size: object
) -> SampleListLayout:
    """Keep the columns and page size a person chose for the dataset's sample list."""
    layout, _created = SampleListLayout.objects.update_or_create(
        user=user,
        dataset=dataset,
        defaults={"columns": list(columns_clean(columns)), "page_size": page_size_clean(page_size)},
    )
    return layout


def _name_clean(raw: str) -> str:
    name = " ".join(raw.split())
    if not name:
        raise ValidationError({"name": _("Give the view a name.")}, code="no_name")
    if len(name) > NAME_MAX:
        raise ValidationError(
            {"name": _("Keep the name under %(n)d characters.") % {"n": NAME_MAX}},
            code="name_too_long",
        )
    return name


def _require_lead(user: User) -> None:
    if not is_lead(user):
        raise PermissionDenied(_("Only project leads keep views of the sample list."))


def _save(view: SavedView) -> SavedView:
    try:
        with transaction.atomic():
            view.save()
    except IntegrityError:
        # The code on the field's own error: the API answers it as a conflict (core.api).
        message = _("You already have a view named “%(name)s”.") % {"name": view.name}
        raise ValidationError({"name": ValidationError(message, code="duplicate_name")}) from None
    return view


def saved_view_create(
    *,
    dataset: Dataset,
    owner: User,
    name: str,
    shared: bool,
    query: str,
    columns: Iterable[str],
    page_size: object,
) -> SavedView:
    """A new view of the dataset's sample list, the owner's alone or shared with every lead."""
    _require_lead(owner)
    view = SavedView(
        dataset=dataset,
        owner=owner,
        name=_name_clean(name),
        shared=shared,
        query=query_clean(query),
        columns=list(columns_clean(columns)),
        page_size=page_size_clean(page_size),
    )
    return _save(view)


def saved_view_update(
    *,
    view: SavedView,
    by: User,
    name: str,
    shared: bool,
    query: str,
    columns: Iterable[str],
    page_size: object,
) -> SavedView:
    """Replace a view's name, sharing, filter, columns and page size (its owner only)."""
    _require_owner(view, by)
    view.name = _name_clean(name)
    view.shared = shared
    view.query = query_clean(query)
    view.columns = list(columns_clean(columns))
    view.page_size = page_size_clean(page_size)
    return _save(view)


def saved_view_delete(*, view: SavedView, by: User) -> None:
    """Delete a view (its owner only)."""
    _require_owner(view, by)
    view.delete()


def _require_owner(view: SavedView, user: User) -> None:
    _require_lead(user)
    if view.owner_id != user.pk:
        raise PermissionDenied(_("Only the person who saved a view may change or delete it."))
