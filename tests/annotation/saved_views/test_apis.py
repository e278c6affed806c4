"""The saved views' API (annotation/saved_views/apis.py): leads list the views they may open,
save, open, change and delete their own; the same checks as the page, every bad input a 400
that names its field, others' views 403 (shared) or 404 (private), never a 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from annotation.models import SampleStatus, SavedView
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.annotation.saved_view_factories import SavedViewFactory
from tests.conftest import client_for

pytestmark = pytest.mark.django_db

GOOD: dict[str, Any] = {
    "name": "VFP to check",
    "shared": True,
    "filter": {"status": ["imported"], "category": "VFP", "ordering": "-priority"},
    "columns": ["status", "question"],
    "page_size": 100,
}


def _list(dataset_id: int) -> str:
    return reverse("api_saved_views", args=[dataset_id])


def _one(view: SavedView) -> str:
    return reverse("api_saved_view", args=[view.dataset_id, view.pk])


def test_a_lead_saves_a_view_and_another_lead_opens_it_and_its_samples(lead: Any) -> None:
    """The view keeps the filter as the list's query; opening it gives the sample list API's
    URL with that query, which lists the samples the filter selects."""
    dataset = mmooc_dataset()
    wanted = mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    mmooc_sample(dataset, status=SampleStatus.IMPORTED, category_code="MA")
    created = client_for(lead).post(_list(dataset.pk), GOOD, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["query"] == "status=imported&category=VFP&ordering=-priority"
    assert (body["owner"], body["mine"], body["shared"]) == (lead.username, True, True)
    assert body["page_size"] == 100
    other = client_for(UserFactory.create(role="lead"))
    listed = other.get(_list(dataset.pk)).json()
    assert [(v["name"], v["mine"]) for v in listed] == [("VFP to check", False)]
    opened = other.get(reverse("api_saved_view", args=[dataset.pk, body["id"]])).json()
    assert opened["page_url"].endswith(f"?view={body['id']}")
    samples = other.get(opened["samples_url"]).json()
    assert [s["id"] for s in samples["results"]] == [wanted.pk]


def test_the_list_holds_own_and_shared_views_only(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """Another lead's private view is not listed; the list costs the same for more views."""
    dataset = mmooc_dataset()
    other = UserFactory.create(role="lead")
    mine = SavedViewFactory.create(dataset=dataset, owner=lead, name="a")
    shared = SavedViewFactory.create(dataset=dataset, owner=other, shared=True, name="b")
    SavedViewFactory.create(dataset=dataset, owner=other, name="c")
    SavedViewFactory.create(owner=lead, name="elsewhere")
    client = client_for(lead)
    client.get(_list(dataset.pk))  # the roles' cache warmed
    with django_assert_num_queries(2):  # the dataset, the views with their owners
        listed = client.get(_list(dataset.pk)).json()
    assert [v["id"] for v in listed] == [mine.pk, shared.pk]


def test_bad_input_is_a_400_naming_its_field(lead: Any) -> None:
    dataset = mmooc_dataset()
    client = client_for(lead)
    cases: list[tuple[Any, str]] = [
        ({**GOOD, "name": ""}, "name"),
        ({**GOOD, "name": "   "}, "name"),
        ({**GOOD, "name": "n" * 101}, "name"),
        ({**GOOD, "name": 7}, "name"),
        ({**GOOD, "shared": "maybe"}, "shared"),
        ({**GOOD, "filter": "status=imported"}, "filter"),
        ({**GOOD, "filter": ["status"]}, "filter"),
        ({**GOOD, "filter": {"admin": "1"}}, "filter"),
        ({**GOOD, "filter": {"status": ["nope"]}}, "filter"),
        ({**GOOD, "filter": {"status": "imported"}}, "filter"),
        ({**GOOD, "filter": {"status": [1]}}, "filter"),
        ({**GOOD, "filter": {"category": ["VFP"]}}, "filter"),
        ({**GOOD, "filter": {"category": {"a": 1}}}, "filter"),
        ({**GOOD, "filter": {"gold": "yes"}}, "filter"),
        ({**GOOD, "filter": {"score_min": True}}, "filter"),
        ({**GOOD, "filter": {"score_min": 3}}, "filter"),
        ({**GOOD, "filter": {"created_after": "yesterday"}}, "filter"),
        ({**GOOD, "filter": {"ordering": "password"}}, "filter"),
        ({**GOOD, "filter": {"search": "s" * 3000}}, "filter"),
        ({**GOOD, "columns": ["nope"]}, "columns"),
        ({**GOOD, "columns": "status"}, "columns"),
        ({**GOOD, "page_size": 33}, "page_size"),
        ({**GOOD, "page_size": "many"}, "page_size"),
        ({**GOOD, "owner": "someone"}, "owner"),
    ]
    for body, field in cases:
        response = client.post(_list(dataset.pk), body, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in response.json(), (body, response.json())
    for raw in (b"[]", b'"x"', b"null", b"{"):
        response = client.post(_list(dataset.pk), raw, content_type="application/json")
        assert response.status_code == 400, raw
    form = client.post(_list(dataset.pk), {"name": "x"})  # multipart: not read
    assert form.status_code == 415
    assert not SavedView.objects.exists()


def test_a_second_view_of_the_same_name_is_a_conflict(lead: Any) -> None:
    dataset = mmooc_dataset()
    client = client_for(lead)
    assert client.post(_list(dataset.pk), GOOD, format="json").status_code == 201
    again = client.post(_list(dataset.pk), {**GOOD, "name": " VFP  to check"}, format="json")
    assert again.status_code == 409
    assert "VFP to check" in again.json()["detail"][0]
    assert SavedView.objects.count() == 1


def test_the_owner_changes_the_fields_given_and_deletes(lead: Any) -> None:
    view = SavedViewFactory.create(owner=lead, page_size=25, columns=["status"])
    client = client_for(lead)
    changed = client.patch(_one(view), {"name": "renamed", "filter": {}}, format="json")
    assert changed.status_code == 200, changed.content
    view.refresh_from_db()
    assert (view.name, view.query, view.page_size, view.columns) == (
        "renamed",
        "",
        25,
        ["external_id", "status"],
    )
    bad = client.patch(_one(view), {"page_size": 7}, format="json")
    assert bad.status_code == 400 and "page_size" in bad.json()
    assert client.delete(_one(view)).status_code == 204
    assert not SavedView.objects.exists()
    assert client.get(_one(view)).status_code == 404


def test_others_views_are_403_when_shared_and_404_when_private(lead: Any) -> None:
    shared = SavedViewFactory.create(shared=True)
    private = SavedViewFactory.create(dataset=shared.dataset, owner=shared.owner)
    client = client_for(lead)
    assert client.get(_one(shared)).status_code == 200
    for view, status in ((shared, 403), (private, 404)):
        assert client.patch(_one(view), {"name": "mine"}, format="json").status_code == status
        assert client.delete(_one(view)).status_code == status
    assert client.get(_one(private)).status_code == 404
    elsewhere = reverse("api_saved_view", args=[mmooc_dataset().pk, shared.pk])
    assert client.get(elsewhere).status_code == 404  # a view of another dataset
    assert client.get(reverse("api_saved_view", args=[shared.dataset_id, 10**9])).status_code == 404
    assert client.get(_list(10**9)).status_code == 404
    assert SavedView.objects.count() == 2 and not SavedView.objects.filter(name="mine").exists()


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_only_leads_keep_views(role: str) -> None:
    view = SavedViewFactory.create(shared=True)
    client = client_for(UserFactory.create(role=role))
    assert client.get(_list(view.dataset_id)).status_code == 403
    assert client.post(_list(view.dataset_id), GOOD, format="json").status_code == 403
    assert client.get(_one(view)).status_code == 403
    assert client.delete(_one(view)).status_code == 403
    assert SavedView.objects.count() == 1


def test_anonymous_callers_are_refused(api_client: Any) -> None:
    view = SavedViewFactory.create(shared=True)
    assert api_client.get(_list(view.dataset_id)).status_code in (401, 403)
    assert api_client.get(_one(view)).status_code in (401, 403)


def test_the_columns_keep_the_order_given(lead: Any) -> None:
    """The columns come back in the order sent, as the page shows them; a change reorders."""
    dataset = mmooc_dataset()
    client = client_for(lead)
    body = {**GOOD, "columns": ["priority", "question", "status"]}
    created = client.post(_list(dataset.pk), body, format="json").json()
    assert created["columns"] == ["external_id", "priority", "question", "status"]
    view = SavedView.objects.get(pk=created["id"])
    changed = client.patch(_one(view), {"columns": ["status", "external_id"]}, format="json")
    assert changed.json()["columns"] == ["status", "external_id"]
