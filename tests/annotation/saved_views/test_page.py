"""The sample list page's layout (annotation/saved_views/page.py): the columns and page size
kept or given, saved views opened from the page, the selection controls, leads only where
views are concerned, and a fixed number of queries."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Dataset, SampleStatus
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.annotation.saved_view_factories import SampleListLayoutFactory, SavedViewFactory
from tests.support.html import attribute, element, elements, has, text
from tests.support.http import browser

pytestmark = pytest.mark.django_db


def _dataset(n: int, **fields: Any) -> Dataset:
    dataset = mmooc_dataset()
    for _ in range(n):
        mmooc_sample(dataset, status=SampleStatus.IMPORTED, **fields)
    return dataset


def _url(dataset: Dataset) -> str:
    return reverse("annotation:sample_list", args=[dataset.pk])


def _headers(page: str) -> list[str]:
    return [attribute(th, "data-column") for th in elements(page, "th") if has(th, "data-column")]


def test_the_list_shows_the_default_columns_then_the_ones_kept(lead: Any) -> None:
    dataset = _dataset(2)
    client = browser(lead)
    page = client.get(_url(dataset)).content.decode()
    assert _headers(page) == [
        "media", "external_id", "question", "category", "status", "priority", "gold"
    ]  # fmt: skip
    SampleListLayoutFactory.create(
        user=lead, dataset=dataset, columns=["id", "scenario", "updated"], page_size=25
    )
    page = client.get(_url(dataset)).content.decode()
    assert _headers(page) == ["id", "external_id", "scenario", "updated"]
    cells = [text(td) for td in elements(page, "td")]
    assert "coarse_perception" in cells and 'data-testid="gold-cell"' not in page
    assert attribute(element(page, "option", selected=True, value="25"), "value") == "25"


def test_the_columns_show_in_the_order_kept_and_the_chooser_lists_them_so(lead: Any) -> None:
    """Headers and cells follow the order chosen; the chooser lists the shown columns first,
    in that order, with their move buttons (shown by the page's script), and sends the
    external id's place though its box cannot be unticked."""
    dataset = _dataset(1)
    sample = dataset.samples.get()
    SampleListLayoutFactory.create(
        user=lead, dataset=dataset, columns=["priority", "id", "external_id", "scenario"]
    )
    page = browser(lead).get(_url(dataset)).content.decode()
    assert _headers(page) == ["priority", "id", "external_id", "scenario"]
    row = elements(element(page, "tbody"), "td")
    assert [text(td) for td in row[1:3]] == [str(sample.priority), str(sample.pk)]
    assert text(row[4]) == "coarse_perception"
    order = element(page, "ol", id="column-order")
    listed = [attribute(li, "data-column") for li in elements(order, "li")]
    assert listed[:4] == ["priority", "id", "external_id", "scenario"] and len(listed) == 15
    sent = [attribute(i, "value") for i in elements(order, "input", name="columns", type="hidden")]
    assert sent == ["external_id"]
    assert len(elements(order, "button", data_move="up")) == 15
    assert element(order, "button", aria_label="Move “Priority” down")


def test_the_page_size_kept_pages_the_list_and_its_pages_keep_the_url(lead: Any) -> None:
    dataset = _dataset(30)
    client = browser(lead)
    SampleListLayoutFactory.create(user=lead, dataset=dataset, page_size=25)
    page = client.get(_url(dataset), {"status": "imported"}).content.decode()
    assert len(elements(page, "input", name="ids")) == 25 and "Page 1 of 2" in page
    given = client.get(_url(dataset), {"page_size": "100", "columns": "id"}).content.decode()
    assert len(elements(given, "input", name="ids")) == 30
    assert _headers(given) == ["id", "external_id"]
    bad = client.get(_url(dataset), {"page_size": "1000000"}).content.decode()
    assert "Choose one of these page sizes" in text(element(bad, id="layout-problems"))
    assert len(elements(bad, "input", name="ids")) == 25
    paged = client.get(_url(dataset), {"status": "imported", "page_size": "25", "columns": "id"})
    # The next page's link carries its cursor, then the filter, the columns and the page size.
    following = attribute(element(paged.content.decode(), "a", rel="next"), "href")
    assert following.startswith("?cursor=")
    assert following.endswith("&status=imported&columns=id&columns=external_id&page_size=25")
    last = client.get(_url(dataset) + following).content.decode()
    assert len(elements(last, "input", name="ids")) == 5


def test_a_shared_view_opens_for_another_lead_with_its_filter_and_columns(lead: Any) -> None:
    """The view's link carries its filter; opened, the list shows the view's columns and page
    size; the other lead may not update it but may save their own."""
    dataset = _dataset(3)
    mmooc_sample(dataset, status=SampleStatus.VERIFIED, category_code="MKB")
    owner = UserFactory.create(role="lead")
    view = SavedViewFactory.create(
        dataset=dataset,
        owner=owner,
        shared=True,
        name="MKB verified",
        query="status=verified&category=MKB",
        columns=["external_id", "category", "status"],
        page_size=100,
    )
    client = browser(lead)
    listing = client.get(_url(dataset)).content.decode()
    link = element(listing, "a", data_view=str(view.pk))
    assert attribute(link, "href") == f"?status=verified&category=MKB&view={view.pk}"
    assert text(link) == "MKB verified" and f"by {owner.username}" in listing
    opened = client.get(_url(dataset) + attribute(link, "href")).content.decode()
    assert "1 sample matches." in opened
    assert _headers(opened) == ["external_id", "category", "status"]
    assert "Showing the view “MKB verified”." in opened and "view-differs" not in opened
    assert "view-update" not in opened and "view-delete" not in opened
    assert element(opened, "form", id="view-create")
    # Refining the filter keeps the view open.
    kept = element(element(opened, "form", id="sample-filter"), "input", name="view")
    assert attribute(kept, "value") == str(view.pk)
    changed = client.get(_url(dataset), {"status": "verified", "view": str(view.pk)})
    assert "The list no longer matches the view as saved." in changed.content.decode()


def test_the_owner_may_update_and_delete_the_open_view(lead: Any) -> None:
    dataset = _dataset(1)
    view = SavedViewFactory.create(dataset=dataset, owner=lead)
    page = browser(lead).get(_url(dataset), {"status": "imported", "view": str(view.pk)})
    form = element(page.content.decode(), "form", id="view-update")
    assert attribute(element(form, "input", name="query"), "value") == "status=imported"
    assert [attribute(i, "value") for i in elements(form, "input", name="columns")] == [
        "external_id",
        "status",
    ]
    assert element(page.content.decode(), "form", id="view-delete")


def test_a_private_view_of_another_lead_stays_closed(lead: Any) -> None:
    dataset = _dataset(1)
    private = SavedViewFactory.create(dataset=dataset, columns=["id"])
    page = browser(lead).get(_url(dataset), {"view": str(private.pk)}).content.decode()
    assert not elements(page, "a", data_view=str(private.pk))
    assert "No such view, or it is not shared with you." in page
    assert "id" not in _headers(page)


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_members_who_are_not_leads_see_no_views_but_keep_their_columns(
    request: pytest.FixtureRequest, role: str
) -> None:
    user = request.getfixturevalue(role)
    dataset = _dataset(2)
    services.dataset_add_member(dataset=dataset, user=user)
    view = SavedViewFactory.create(dataset=dataset, shared=True, columns=["id"])
    SampleListLayoutFactory.create(user=user, dataset=dataset, columns=["gold", "question"])
    page = browser(user).get(_url(dataset), {"view": str(view.pk)}).content.decode()
    assert "saved-views" not in page and "view-create" not in page
    assert _headers(page) == ["external_id", "question"]
    assert element(page, "form", id="layout-form")
    assert not elements(page, "input", name="columns", value="gold")


def test_the_selection_offers_the_page_then_every_matching_sample(lead: Any) -> None:
    """The header box selects the page; the list offers all matching samples when there are
    more than the page shows (static/js/sample-list.js shows the offers)."""
    dataset = _dataset(30)
    client = browser(lead)
    page = client.get(_url(dataset), {"page_size": "25"}).content.decode()
    assert element(page, "input", id="select-page", type="checkbox")
    assert has(element(page, id="page-selected"), "hidden")
    assert "Select all 30 matching samples" in text(element(page, id="select-all-matching"))
    assert element(page, "option", value="all")
    assert "js/sample-list.js" in page
    whole = client.get(_url(dataset), {"page_size": "50"}).content.decode()
    assert not elements(whole, id="select-all-matching")


@pytest.mark.parametrize("opened", [False, True])
def test_the_list_costs_the_same_queries_for_3_or_30_samples(
    lead: Any, django_assert_num_queries: Any, opened: bool
) -> None:
    """A lead's list: session, user, roles, dataset, the views, the kept layout (none when a
    view gives it), the planner's estimate, the count within its budget (savepoint, timeout,
    count, rollback, release), page, media, filter choices (one statement over 4 columns of the
    samples, terms)."""
    dataset = _dataset(3)
    view = SavedViewFactory.create(dataset=dataset, owner=lead, query="status=imported")
    SavedViewFactory.create(dataset=dataset, shared=True)
    SampleListLayoutFactory.create(user=lead, dataset=dataset)
    client = browser(lead)
    query = {"status": "imported", **({"view": str(view.pk)} if opened else {})}
    with django_assert_num_queries(15 if opened else 16):
        assert client.get(_url(dataset), query).status_code == 200
    for _ in range(27):
        mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    with django_assert_num_queries(15 if opened else 16):
        assert "30 samples match." in client.get(_url(dataset), query).content.decode()
