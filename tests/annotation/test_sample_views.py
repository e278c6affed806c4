"""The sample list page (annotation/sample_views.py) and the dataset page's next steps:
filters that paging keeps, bulk actions confirmed with their count, leads only, and a fixed
number of queries."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Dataset, DuplicatePair, Sample, SampleStatus
from core import roles
from review.models import Assignment, Slot
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.judging.factories import bulk_samples
from tests.support.html import attribute, element, elements, has, text
from tests.support.http import browser

pytestmark = pytest.mark.django_db


def dataset_with(n_imported: int) -> Dataset:
    dataset = mmooc_dataset()
    for _ in range(n_imported):
        mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    return dataset


def test_the_list_filters_and_its_pages_keep_the_filter(lead: Any) -> None:
    """Search and status narrow the list; the next-page link carries the filter."""
    dataset = dataset_with(55)
    mmooc_sample(dataset, external_id="needle", question="Where is the needle?")
    url = reverse("annotation:sample_list", args=[dataset.pk])
    client = browser(lead)
    page = client.get(url, {"search": "needle"}).content.decode()
    assert "needle" in page and "1 sample matches." in page
    first = client.get(url, {"status": "imported", "ordering": "-id"}).content.decode()
    assert "55 samples match." in first and "Page 1 of 2" in first
    link = attribute(element(first, "a", id="next-page"), "href")
    assert link.startswith("?cursor=") and link.endswith("&status=imported&ordering=-id")
    second = client.get(url + link).content.decode()
    assert len(elements(second, "input", name="ids")) == 5
    assert "?page=2" not in second and "next-page" not in second
    numbered = client.get(url, {"status": "imported", "ordering": "-id", "page": "2"})
    assert "Page 2 of 2" in numbered.content.decode()  # the links of old still work
    bad = client.get(url, {"status": "nonsense"}).content.decode()
    assert "Unknown status" in bad and "56 samples match." in bad


def test_the_list_costs_the_same_queries_for_3_or_30_samples(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """The page with every filter runs a fixed number of queries whatever it shows."""
    dataset = dataset_with(3)
    client = browser(lead)
    url = reverse("annotation:sample_list", args=[dataset.pk])
    query = {
        "search": "car",
        "category": "VFP",
        "judges_disagree": "false",
        "changed": "true",
        "duplicates": "false",
    }
    # judged, the judges agreeing: "judges agree" matches no sample nobody voted on
    Sample.objects.filter(dataset=dataset).update(judges_disagree=False)
    # session, user, roles, dataset, saved views, kept layout, the last snapshot (none: every
    # sample is changed), the planner's estimate, the count within its budget (savepoint,
    # timeout, count, rollback, release), page, media, filter choices (one statement, terms)
    with django_assert_num_queries(17):
        assert client.get(url, query).status_code == 200
    for _ in range(27):
        mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    Sample.objects.filter(dataset=dataset).update(judges_disagree=False)
    with django_assert_num_queries(17):
        assert "30 samples match." in client.get(url, query).content.decode()


def _next_link(page: str) -> str:
    return attribute(element(page, "a", id="next-page"), "href")


@pytest.mark.parametrize("ordering", ["id", "-updated", "priority", "-status", "external_id"])
def test_first_deep_and_last_pages_cost_the_same_queries_for_3_or_30_samples(
    lead: Any, django_assert_num_queries: Any, ordering: str, monkeypatch: Any
) -> None:
    """The first page, a page by its cursor and the last page each run a fixed number of
    queries whatever the dataset's size: exact counts (few samples) and estimated ones (the
    planner's estimate over the threshold, as at a million samples) alike; the next link keeps
    the sort and a filter."""
    dataset = dataset_with(3)
    client = browser(lead)
    url = reverse("annotation:sample_list", args=[dataset.pk])
    base = {"ordering": ordering, "status": "imported", "page_size": "25"}

    def pages(expect: int) -> None:
        first = client.get(url, base).content.decode()
        with django_assert_num_queries(expect):
            first = client.get(url, base).content.decode()
        with django_assert_num_queries(expect):
            assert client.get(url, {**base, "page": "last"}).status_code == 200
        if "next-page" in first:
            with django_assert_num_queries(expect):
                assert client.get(url + _next_link(first)).status_code == 200

    # session, user, roles, dataset, saved views, kept layout, the planner's estimate, the
    # count (savepoint, timeout, count, rollback, release), page, media, filter choices (one
    # statement, terms)
    pages(16)
    for _ in range(27):
        mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    pages(16)
    # The planner's estimate over the threshold: no count tried (4 queries fewer).
    monkeypatch.setattr("annotation.sample_views.EXACT_COUNT_BELOW", 1)
    pages(11)
    assert "About" in client.get(url, base).content.decode()


def test_a_list_shorter_than_a_page_says_its_exact_count_even_when_it_was_estimated(
    lead: Any, django_assert_num_queries: Any, monkeypatch: Any
) -> None:
    """With the planner's estimate as the count (as at a million samples), a list the first
    or the last page holds whole is counted by that page: "3 samples match.", no "About",
    and no query more; a list longer than the page keeps its labelled estimate."""
    dataset = dataset_with(3)
    client = browser(lead)
    url = reverse("annotation:sample_list", args=[dataset.pk])
    monkeypatch.setattr("annotation.sample_views.EXACT_COUNT_BELOW", 1)
    base = {"status": "imported", "page_size": "25"}
    client.get(url, base)
    for query in (base, {**base, "page": "last"}):
        with django_assert_num_queries(11):
            page = client.get(url, query).content.decode()
        count = text(element(page, "p", id="match-count"))
        assert "3 samples match." in count and "About" not in count, (query, count)
    for _ in range(27):
        mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    for query in (base, {**base, "page": "last"}):
        with django_assert_num_queries(11):
            page = client.get(url, query).content.decode()
        count = text(element(page, "p", id="match-count"))
        assert "About" in count, (query, count)


def test_the_last_page_and_the_cursors_walk_the_whole_filtered_list(lead: Any) -> None:
    """Next links from the first page, and previous links from the last, visit every
    matching sample once in the sort's order; the filter and page size stay in the links."""
    dataset = mmooc_dataset()
    made = bulk_samples(dataset, 63)
    Sample.objects.filter(pk__in=[s.pk for s in made[:3]]).update(status=SampleStatus.VERIFIED)
    Sample.objects.filter(pk__in=[s.pk for s in made[::3]]).update(priority=2)
    client = browser(lead)
    url = reverse("annotation:sample_list", args=[dataset.pk])
    params = {"status": "pending_review", "ordering": "-priority", "page_size": "25"}
    expected = [
        str(pk)
        for pk in Sample.objects.filter(dataset=dataset, status=SampleStatus.PENDING_REVIEW)
        .order_by("-priority", "-id")
        .values_list("pk", flat=True)
    ]

    def shown(page: str) -> list[str]:
        return [attribute(box, "value") for box in elements(page, "input", name="ids")]

    seen: list[str] = []
    page = client.get(url, params).content.decode()
    while True:
        seen += shown(page)
        if "next-page" not in page:
            break
        link = _next_link(page)
        assert "status=pending_review" in link and "page_size=25" in link
        page = client.get(url + link).content.decode()
    assert seen == expected
    back: list[str] = []
    page = client.get(url, {**params, "page": "last"}).content.decode()
    assert "Page 3 of 3" in page and shown(page) == expected[-25:]
    while True:
        back = shown(page) + back
        previous = elements(page, "a", rel="prev")
        if not previous:
            break
        page = client.get(url + attribute(previous[0], "href")).content.decode()
    assert back == expected


def _tampered(token: str) -> str:
    value, _colon, signature = token.rpartition(":")
    return f"{value[:-2]}{'A' if value[-2] != 'A' else 'B'}{value[-1]}:{signature}"


def test_a_page_link_that_cannot_be_used_gives_the_first_page_and_says_so(lead: Any) -> None:
    """Garbage, an altered or cut cursor, or one of another sort: the first page (never a
    500), with a message saying why; the filter still applies."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 30)
    client = browser(lead)
    url = reverse("annotation:sample_list", args=[dataset.pk])
    first = client.get(url, {"page_size": "25"}).content.decode()
    token = unquote(_next_link(first).removeprefix("?cursor=").partition("&")[0])
    for bad, ordering, says in [
        ("garbage", "id", "not valid"),
        ("", "id", None),
        (token[:-4], "id", "not valid"),
        (_tampered(token), "id", "not valid"),
        (token, "-id", "another sort order"),
        (token, "priority", "another sort order"),
        ("é" * 3000, "id", "not valid"),
    ]:
        answer = client.get(url, {"cursor": bad, "ordering": ordering, "page_size": "25"})
        assert answer.status_code == 200
        page = answer.content.decode()
        assert len(elements(page, "input", name="ids")) == 25 and "Page 1 of 2" in page
        if says:
            assert says in page and "Here is the first page." in page
    filtered = client.get(url, {"cursor": "garbage", "search": "nothing-matches-this"})
    assert filtered.status_code == 200 and "0 samples match." in filtered.content.decode()


def test_send_every_matching_sample_to_review_after_confirming_the_count(lead: Any) -> None:
    """The bulk form first shows how many samples the action changes; confirming moves them,
    opens their slots and says so; the filter is kept on the way back."""
    dataset = dataset_with(4)
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    client = browser(lead)
    bulk = reverse("annotation:sample_bulk", args=[dataset.pk])
    form = {"action": "send_to_review", "scope": "all", "search": "car"}
    confirm = client.post(bulk, form)
    assert confirm.status_code == 200
    assert "Send 4 of the 5 selected samples to review?" in confirm.content.decode()
    assert Sample.objects.filter(status=SampleStatus.IMPORTED).count() == 4
    done = client.post(bulk, {**form, "confirm": "1"}, follow=True)
    text = done.content.decode()
    assert "4 samples sent to review; 8 review slots opened." in text
    assert "1 selected sample was left as it was." in text
    assert done.redirect_chain[-1][0].endswith("?search=car")
    assert not Sample.objects.filter(status=SampleStatus.IMPORTED).exists()
    assert Slot.objects.filter(dataset=dataset).count() == 8


def test_ticked_samples_take_down_with_a_reason(lead: Any) -> None:
    """Only ticked samples are taken down; a takedown without a reason is refused with a
    message and changes nothing; ticking nothing asks to tick."""
    dataset = dataset_with(3)
    a, b, _c = Sample.objects.filter(dataset=dataset).order_by("id")
    client = browser(lead)
    bulk = reverse("annotation:sample_bulk", args=[dataset.pk])
    form = {"action": "take_down", "scope": "selected", "ids": [a.pk, b.pk], "confirm": "1"}
    refused = client.post(bulk, form, follow=True).content.decode()
    assert "Say why these samples are taken down." in refused
    assert not Sample.objects.filter(status=SampleStatus.REMOVED).exists()
    done = client.post(bulk, {**form, "reason": "licence"}, follow=True).content.decode()
    assert "2 samples taken down." in done
    assert set(Sample.objects.filter(status=SampleStatus.REMOVED)) == {a, b}
    empty = client.post(bulk, {"action": "restore", "scope": "selected"}, follow=True)
    assert "Tick some samples first" in empty.content.decode()


def test_ticked_samples_are_assigned_to_annotators_ticked_on_the_confirmation(
    lead: Any, annotator: Any, auditor: Any, django_assert_num_queries: Any
) -> None:
    """ "Assign to annotators" asks which of the dataset's annotators (auditors are not
    offered) in a fixed number of queries; confirming assigns the ticked samples to them and
    says so; nobody ticked is refused with a message; "Unassign" takes them back."""
    dataset = dataset_with(3)
    services.dataset_add_member(dataset=dataset, user=annotator)
    services.dataset_add_member(dataset=dataset, user=auditor, roles={roles.AUDITOR})
    other = UserFactory.create(role=roles.ANNOTATOR, member_of=dataset)
    a, b, _c = Sample.objects.filter(dataset=dataset).order_by("id")
    client = browser(lead)
    bulk = reverse("annotation:sample_bulk", args=[dataset.pk])
    form = {"action": "assign", "scope": "selected", "ids": [a.pk, b.pk]}
    client.post(bulk, form)  # the session and the user's settings, read once
    with django_assert_num_queries(7):
        confirm = client.post(bulk, form)
    page = confirm.content.decode()
    question = text(element(page, id="bulk-question"))
    assert question.startswith("Assign 2 samples to the annotators ticked below?")
    boxes = elements(element(page, "fieldset", id="bulk-assignees"), "input", name="assignees")
    assert [attribute(box, "value") for box in boxes] == sorted(
        [annotator.username, other.username]
    )
    refused = client.post(bulk, {**form, "confirm": "1"}, follow=True).content.decode()
    assert "Choose at least one annotator of this dataset." in refused
    chosen = {**form, "confirm": "1", "assignees": [annotator.username, other.username]}
    done = client.post(bulk, chosen, follow=True).content.decode()
    assert "4 assignments made: those annotators are served these samples first." in done
    assert Assignment.objects.filter(dataset=dataset).count() == 4
    back = {"action": "unassign", "scope": "selected", "ids": [a.pk], "confirm": "1"}
    assert "2 assignments removed." in client.post(bulk, back, follow=True).content.decode()
    assert set(Assignment.objects.values_list("sample_id", flat=True)) == {b.pk}


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_members_see_the_list_but_may_not_act(request: pytest.FixtureRequest, role: str) -> None:
    """Annotators and auditors see the samples without the bulk form; a bulk POST is 403 with
    the reason on the page."""
    user = request.getfixturevalue(role)
    dataset = dataset_with(2)
    services.dataset_add_member(dataset=dataset, user=user)
    client = browser(user)
    page = client.get(reverse("annotation:sample_list", args=[dataset.pk])).content.decode()
    assert "2 samples match." in page and "bulk-form" not in page
    response = client.post(
        reverse("annotation:sample_bulk", args=[dataset.pk]),
        {"action": "send_to_review", "scope": "all", "confirm": "1"},
    )
    assert response.status_code == 403
    assert not Slot.objects.exists()


def test_the_dataset_page_says_what_to_do_next_and_links_every_page(lead: Any) -> None:
    """The dataset page offers to send the imported samples, points to the adjudication
    queue, and links samples, review, judging, audits and snapshots."""
    dataset = dataset_with(3)
    mmooc_sample(dataset, status=SampleStatus.NEEDS_ADJUDICATION)
    page = browser(lead).get(reverse("annotation:dataset_detail", args=[dataset.pk]))
    text = page.content.decode()
    assert "3 imported samples are not in review:" in text
    assert "1 sample needs adjudication" in text
    for name in (
        "annotation:sample_list",
        "review:queue",
        "review:adjudication_list",
        "judging:dataset_judging",
        "judging:audit_list",
        "annotation:snapshot_list",
        "annotation:dataset_import",
    ):
        assert reverse(name, args=[dataset.pk]) in text, name


def test_the_automatic_sending_is_a_lead_setting(lead: Any, annotator: Any) -> None:
    """A lead turns the setting on from the dataset page; an annotator may not."""
    dataset = mmooc_dataset()
    url = reverse("annotation:dataset_auto_send", args=[dataset.pk])
    services.dataset_add_member(dataset=dataset, user=annotator)
    assert browser(annotator).post(url, {"auto_send_to_review": "on"}).status_code == 403
    assert browser(lead).post(url, {"auto_send_to_review": "on"}).status_code == 302
    dataset.refresh_from_db()
    assert dataset.auto_send_to_review is True
    browser(lead).post(url, {})
    dataset.refresh_from_db()
    assert dataset.auto_send_to_review is False


def _pair(dataset: Dataset) -> DuplicatePair:
    first = mmooc_sample(dataset, external_id="first-seen", question="Which shape is red?")
    later = mmooc_sample(dataset, external_id="copied", question="WHICH shape is red")
    return DuplicatePair.objects.create(
        dataset=dataset, original=first, sample=later, image_distance=2
    )


def test_the_possible_duplicates_filter_keeps_both_sides(lead: Any) -> None:
    dataset = dataset_with(2)
    _pair(dataset)
    url = reverse("annotation:sample_list", args=[dataset.pk])
    page = browser(lead).get(url, {"duplicates": "true"}).content.decode()
    assert "2 samples match." in page
    assert "first-seen" in page and "copied" in page
    assert has(element(page, "input", name="duplicates", type="checkbox"), "checked")
    others = browser(lead).get(url, {"duplicates": "false"}).content.decode()
    assert "2 samples match." in others and "copied" not in others


def test_a_pair_side_by_side_shows_both_samples_and_their_images(lead: Any) -> None:
    dataset = mmooc_dataset()
    pair = _pair(dataset)
    url = reverse("annotation:duplicate_pair", args=[dataset.pk, pair.pk])
    page = browser(lead).get(url).content.decode()
    assert "first-seen" in page and "copied" in page
    assert "Which shape is red?" in page and "WHICH shape is red" in page
    for sample in (pair.original, pair.sample):
        asset_id = sample.media_links.get().asset_id
        assert reverse("annotation:media_display", args=[asset_id]) in page
    assert "2 bits apart" in page


def test_a_pair_of_another_dataset_or_none_is_404(lead: Any, annotator: Any) -> None:
    dataset, other = mmooc_dataset(), mmooc_dataset()
    pair = _pair(dataset)
    client = browser(lead)
    assert (
        client.get(reverse("annotation:duplicate_pair", args=[other.pk, pair.pk])).status_code
        == 404
    )
    assert (
        client.get(reverse("annotation:duplicate_pair", args=[dataset.pk, 999999])).status_code
        == 404
    )
    # Not a member of the dataset: it is not shown to them at all.
    outsider = browser(annotator)
    assert (
        outsider.get(reverse("annotation:duplicate_pair", args=[dataset.pk, pair.pk])).status_code
        == 404
    )
    assert outsider.get(reverse("annotation:duplicate_list", args=[dataset.pk])).status_code == 404


def test_the_duplicate_list_costs_the_same_queries_for_1_or_5_pairs(
    lead: Any, django_assert_num_queries: Any
) -> None:
    dataset = mmooc_dataset()
    _pair(dataset)
    client = browser(lead)
    url = reverse("annotation:duplicate_list", args=[dataset.pk])
    # session, user, roles, dataset, count, page
    with django_assert_num_queries(6):
        assert client.get(url).status_code == 200
    for _n in range(4):
        first, later = mmooc_sample(dataset), mmooc_sample(dataset)
        DuplicatePair.objects.create(dataset=dataset, original=first, sample=later)
    with django_assert_num_queries(6):
        page = client.get(url).content.decode()
    assert page.count("Side by side") == 5
