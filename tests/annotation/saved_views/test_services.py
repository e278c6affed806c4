"""Writes of the sample list's layouts and saved views (annotation/saved_views/services.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from annotation.models import SampleListLayout, SavedView
from annotation.saved_views import services
from tests.annotation.factories import UserFactory, mmooc_dataset
from tests.annotation.saved_view_factories import SavedViewFactory

pytestmark = pytest.mark.django_db

GOOD: dict[str, Any] = {
    "query": "status=imported&category=VFP",
    "columns": ["status"],
    "page_size": "100",
}


def test_a_layout_is_kept_once_per_person_and_dataset(annotator: Any) -> None:
    """Choosing again replaces the choice; another dataset keeps its own."""
    first, second = mmooc_dataset(), mmooc_dataset()
    services.sample_list_layout_keep(
        user=annotator, dataset=first, columns=["question"], page_size="25"
    )
    services.sample_list_layout_keep(
        user=annotator, dataset=first, columns=["status", "id"], page_size=200
    )
    services.sample_list_layout_keep(user=annotator, dataset=second, columns=[], page_size=50)
    kept = SampleListLayout.objects.get(user=annotator, dataset=first)
    assert (kept.columns, kept.page_size) == (["external_id", "status", "id"], 200)
    assert SampleListLayout.objects.filter(user=annotator).count() == 2


def test_a_layout_and_a_view_keep_the_columns_in_the_order_chosen(lead: Any) -> None:
    dataset = mmooc_dataset()
    order = ["priority", "question", "external_id", "status"]
    layout = services.sample_list_layout_keep(
        user=lead, dataset=dataset, columns=order, page_size=50
    )
    view = services.saved_view_create(
        dataset=dataset, owner=lead, name="ordered", shared=False, **{**GOOD, "columns": order}
    )
    layout.refresh_from_db()
    view.refresh_from_db()
    assert layout.columns == view.columns == order
    services.saved_view_update(
        view=view, by=lead, name="ordered", shared=False, **{**GOOD, "columns": order[::-1]}
    )
    view.refresh_from_db()
    assert view.columns == order[::-1]


def test_a_bad_layout_keeps_nothing(annotator: Any) -> None:
    dataset = mmooc_dataset()
    with pytest.raises(ValidationError):
        services.sample_list_layout_keep(
            user=annotator, dataset=dataset, columns=["nope"], page_size=50
        )
    with pytest.raises(ValidationError):
        services.sample_list_layout_keep(
            user=annotator, dataset=dataset, columns=["id"], page_size=33
        )
    assert not SampleListLayout.objects.exists()


def test_a_lead_saves_a_view_with_its_filter_columns_and_page_size(lead: Any) -> None:
    dataset = mmooc_dataset()
    view = services.saved_view_create(
        dataset=dataset, owner=lead, name="  VFP   to check ", shared=True, **GOOD
    )
    view.refresh_from_db()
    assert view.name == "VFP to check" and view.shared and view.owner == lead
    assert view.query == "status=imported&category=VFP"
    assert (view.columns, view.page_size) == (["external_id", "status"], 100)


@pytest.mark.parametrize(
    ("fields", "key", "message"),
    [
        ({"name": " "}, "name", "Give the view a name."),
        ({"name": "x" * 101}, "name", "Keep the name under 100 characters."),
        ({"query": "page=2"}, "query", "Unknown filter “page”"),
        ({"query": "status=lost"}, "query", "Unknown status “lost”"),
        ({"columns": ["secret"]}, "columns", "Unknown column “secret”"),
        ({"page_size": "1000"}, "page_size", "Choose one of these page sizes"),
    ],
)
def test_a_view_with_bad_input_is_refused_and_not_saved(
    lead: Any, fields: dict[str, Any], key: str, message: str
) -> None:
    given = {"name": "mine", "shared": False, **GOOD, **fields}
    with pytest.raises(ValidationError) as caught:
        services.saved_view_create(dataset=mmooc_dataset(), owner=lead, **given)
    assert message in caught.value.message_dict[key][0]
    assert not SavedView.objects.exists()


def test_a_person_names_each_view_of_a_dataset_once(lead: Any) -> None:
    """A second view of the same name is refused; another lead may use the name."""
    dataset = mmooc_dataset()
    services.saved_view_create(dataset=dataset, owner=lead, name="todo", shared=False, **GOOD)
    with pytest.raises(ValidationError) as caught:
        services.saved_view_create(dataset=dataset, owner=lead, name="todo", shared=True, **GOOD)
    assert "You already have a view named “todo”." in caught.value.messages
    other = UserFactory.create(role="lead")
    services.saved_view_create(dataset=dataset, owner=other, name="todo", shared=True, **GOOD)
    assert SavedView.objects.filter(dataset=dataset, name="todo").count() == 2


def test_only_leads_save_views(annotator: Any, auditor: Any) -> None:
    for user in (annotator, auditor):
        with pytest.raises(PermissionDenied):
            services.saved_view_create(
                dataset=mmooc_dataset(), owner=user, name="x", shared=False, **GOOD
            )
    assert not SavedView.objects.exists()


def test_the_owner_updates_and_deletes_a_view_and_nobody_else() -> None:
    """Another lead opens a shared view but may neither change nor delete it."""
    view = SavedViewFactory.create(shared=True)
    other = UserFactory.create(role="lead")
    with pytest.raises(PermissionDenied):
        services.saved_view_update(view=view, by=other, name="mine now", shared=False, **GOOD)
    with pytest.raises(PermissionDenied):
        services.saved_view_delete(view=view, by=other)
    view.refresh_from_db()
    assert view.name.startswith("view ") and view.shared
    services.saved_view_update(view=view, by=view.owner, name="renamed", shared=False, **GOOD)
    view.refresh_from_db()
    assert (view.name, view.shared, view.page_size) == ("renamed", False, 100)
    services.saved_view_delete(view=view, by=view.owner)
    assert not SavedView.objects.exists()
