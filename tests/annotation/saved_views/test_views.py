"""The sample list's layout and saved-view forms (annotation/saved_views/views.py): leads
save, update and delete views from the page, annotators keep only their columns, bad input is
a 400 that says what was wrong."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import SampleListLayout, SavedView
from tests.annotation.factories import UserFactory, mmooc_dataset
from tests.annotation.saved_view_factories import SavedViewFactory
from tests.support.http import browser, redirect_url

pytestmark = pytest.mark.django_db

STATE = {"query": "status=imported&category=VFP", "columns": ["status"], "page_size": "25"}


def _create(dataset_id: int) -> str:
    return reverse("annotation:saved_view_create", args=[dataset_id])


def test_a_lead_saves_the_list_as_a_view_and_lands_in_it(lead: Any) -> None:
    dataset = mmooc_dataset()
    response = browser(lead).post(
        _create(dataset.pk), {**STATE, "name": "VFP imported", "shared": "1"}
    )
    view = SavedView.objects.get()
    assert (view.owner, view.shared, view.columns) == (lead, True, ["external_id", "status"])
    list_url = reverse("annotation:sample_list", args=[dataset.pk])
    assert redirect_url(response) == f"{list_url}?status=imported&category=VFP&view={view.pk}"


def test_bad_input_is_a_400_that_says_what_was_wrong(lead: Any) -> None:
    dataset = mmooc_dataset()
    client = browser(lead)
    for form, message in [
        ({**STATE, "name": ""}, "Give the view a name."),
        ({**STATE, "name": "x", "query": "status=imported&admin=1"}, "Unknown filter “admin”"),
        ({**STATE, "name": "x", "page_size": "7"}, "Choose one of these page sizes"),
        ({**STATE, "name": "x", "query": "s" * 5000}, "Keep the filter under 2000 characters."),
    ]:
        response = client.post(_create(dataset.pk), form)
        assert response.status_code == 400, form
        assert message in response.content.decode(), form
    assert not SavedView.objects.exists()


def test_the_owner_updates_and_deletes_the_open_view(lead: Any) -> None:
    view = SavedViewFactory.create(owner=lead)
    client = browser(lead)
    update = reverse("annotation:saved_view_update", args=[view.dataset_id, view.pk])
    done = client.post(update, {**STATE, "name": "renamed"}, follow=True)
    assert "View “renamed” updated." in done.content.decode()
    view.refresh_from_db()
    assert (view.name, view.shared, view.page_size) == ("renamed", False, 25)
    delete = reverse("annotation:saved_view_delete", args=[view.dataset_id, view.pk])
    gone = client.post(delete, follow=True)
    assert "View “renamed” deleted." in gone.content.decode()
    assert gone.redirect_chain[-1][0].endswith("?status=imported&category=VFP")
    assert not SavedView.objects.exists()


def test_another_lead_may_not_change_a_shared_view_nor_see_a_private_one(lead: Any) -> None:
    """A shared view of another lead: 403 to update or delete; a private one: 404."""
    shared = SavedViewFactory.create(shared=True)
    private = SavedViewFactory.create(dataset=shared.dataset, owner=shared.owner)
    client = browser(lead)
    for view, status in ((shared, 403), (private, 404)):
        args = [view.dataset_id, view.pk]
        update = reverse("annotation:saved_view_update", args=args)
        delete = reverse("annotation:saved_view_delete", args=args)
        assert client.post(update, {**STATE, "name": "mine"}).status_code == status
        assert client.post(delete).status_code == status
    assert SavedView.objects.count() == 2
    assert not SavedView.objects.filter(name="mine").exists()


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_members_who_are_not_leads_may_not_save_a_view(
    request: pytest.FixtureRequest, role: str
) -> None:
    user = request.getfixturevalue(role)
    dataset = mmooc_dataset()
    annotation_services.dataset_add_member(dataset=dataset, user=user)
    response = browser(user).post(_create(dataset.pk), {**STATE, "name": "mine"})
    assert response.status_code == 403
    assert "Only project leads keep views" in response.content.decode()
    assert not SavedView.objects.exists()


def test_an_annotator_keeps_their_columns_and_returns_to_the_filter(annotator: Any) -> None:
    dataset = mmooc_dataset()
    annotation_services.dataset_add_member(dataset=dataset, user=annotator)
    layout = reverse("annotation:sample_list_layout", args=[dataset.pk])
    response = browser(annotator).post(layout, STATE)
    kept = SampleListLayout.objects.get(user=annotator, dataset=dataset)
    assert (kept.columns, kept.page_size) == (["external_id", "status"], 25)
    list_url = reverse("annotation:sample_list", args=[dataset.pk])
    assert redirect_url(response) == f"{list_url}?status=imported&category=VFP"
    bad = browser(annotator).post(layout, {**STATE, "columns": ["nope"]})
    assert bad.status_code == 400 and "Unknown column “nope”" in bad.content.decode()


def test_columns_chosen_in_a_view_stand_in_for_its_own_until_it_is_updated(lead: Any) -> None:
    """In an open view, the columns chosen come back in the URL, with the view kept."""
    view = SavedViewFactory.create(owner=lead)
    layout = reverse("annotation:sample_list_layout", args=[view.dataset_id])
    response = browser(lead).post(layout, {**STATE, "view": str(view.pk)})
    assert redirect_url(response).endswith(
        f"?status=imported&category=VFP&view={view.pk}"
        "&columns=external_id&columns=status&page_size=25"
    )


def test_a_dataset_nobody_may_see_is_404(annotator: Any) -> None:
    dataset = mmooc_dataset()  # the annotator is no member
    layout = reverse("annotation:sample_list_layout", args=[dataset.pk])
    assert browser(annotator).post(layout, STATE).status_code == 404
    other = UserFactory.create(role="lead")
    assert (
        browser(other).post(_create(dataset.pk + 1000), {**STATE, "name": "x"}).status_code == 404
    )
