"""Marking gold items from the sample page and the sample list (leads only)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Sample, SampleStatus
from review import services
from review.gold import services as gold
from review.models import GoldItem, ReviewSettings
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory, mmooc_sample
from tests.conftest import client_for
from tests.review.factories import gold_ready_dataset, review_dataset
from tests.review.gold.test_services import AlwaysGold

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_lead_marks_and_unmarks_a_gold_item_on_the_sample_page(lead: Any) -> None:
    dataset = review_dataset(0)
    sample = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    client = _client(lead)
    page = client.get(reverse("annotation:sample_detail", args=[sample.pk])).content.decode()
    assert 'id="gold-mark"' in page
    client.post(
        reverse("review:gold_mark", args=[sample.pk]),
        {"explanation": "Stated in the question.", "attention_check": "on"},
    )
    item = GoldItem.objects.get(sample=sample)
    assert item.attention_check and item.explanation == "Stated in the question."
    page = client.get(reverse("annotation:sample_detail", args=[sample.pk])).content.decode()
    assert 'data-testid="gold-marked"' in page and "Stated in the question." in page
    client.post(reverse("review:gold_unmark", args=[sample.pk]))
    assert not GoldItem.objects.exists()


def test_a_sample_not_verified_is_refused_with_a_message(lead: Any) -> None:
    dataset = review_dataset(1)
    sample = Sample.objects.get(dataset=dataset)
    client = _client(lead)
    page = client.get(reverse("annotation:sample_detail", args=[sample.pk])).content.decode()
    assert "Only verified samples can be gold items." in page
    response = client.post(reverse("review:gold_mark", args=[sample.pk]), follow=True)
    assert "Only verified samples can be gold" in response.content.decode()
    assert not GoldItem.objects.exists()


def test_reviewers_neither_see_nor_mark_gold_items(annotator: Any) -> None:
    dataset = review_dataset(0, members=[annotator])
    sample = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    client = _client(annotator)
    page = client.get(reverse("annotation:sample_detail", args=[sample.pk])).content.decode()
    assert "gold-panel" not in page
    assert client.post(reverse("review:gold_mark", args=[sample.pk])).status_code == 403
    bulk = reverse("review:gold_mark_bulk", args=[dataset.pk])
    assert client.post(bulk, {"ids": [sample.pk]}).status_code == 403
    assert not GoldItem.objects.exists()


def test_the_sample_list_marks_ticked_verified_samples_in_bulk(lead: Any) -> None:
    dataset = review_dataset(1)
    pending = Sample.objects.get(dataset=dataset)
    verified = [mmooc_sample(dataset, status=SampleStatus.VERIFIED) for _ in range(2)]
    client = _client(lead)
    listing = client.get(reverse("annotation:sample_list", args=[dataset.pk])).content.decode()
    bulk = reverse("review:gold_mark_bulk", args=[dataset.pk])
    assert f'formaction="{bulk}"' in listing
    response = client.post(bulk, {"ids": [pending.pk, verified[0].pk]}, follow=True)
    html = response.content.decode()
    assert "1 sample marked as a gold item." in html
    assert f"1 sample is not verified and was not marked: {pending.external_id}." in html
    assert list(GoldItem.objects.values_list("sample_id", flat=True)) == [verified[0].pk]
    response = client.post(bulk, {"scope": "all", "status": "verified"}, follow=True)
    assert "1 sample marked as a gold item." in response.content.decode()
    assert GoldItem.objects.count() == 2
    empty = client.post(bulk, {}, follow=True).content.decode()
    assert "Tick some samples first" in empty


def _served_and_answered(annotator: Any, *, feedback: bool) -> tuple[Sample, Any]:
    dataset, verified = gold_ready_dataset(annotator, feedback=feedback)
    gold.gold_mark(
        sample=Sample.objects.select_related("dataset").get(pk=verified.pk),
        by=None,
        explanation="No car is shown.",
    )
    lease = queue_services.slot_claim(dataset=dataset, reviewer=annotator, rng=AlwaysGold())
    assert lease is not None and lease.gold
    body = {
        "client_uuid": "5b0d2f1e-0000-4000-8000-000000000001",
        "sample": verified.pk,
        "decision": "accept",
        "values": {"category_code": "MA"},
    }
    response = client_for(annotator).post(reverse("api_reviews"), body, format="json")
    assert response.status_code == 201
    return verified, response.json()


def test_after_a_gold_item_the_reviewer_sees_feedback_when_the_dataset_says_so(
    annotator: Any,
) -> None:
    sample, answered = _served_and_answered(annotator, feedback=True)
    assert answered["feedback"]["matched"] is False
    assert answered["feedback"]["matches"]["category_code"] is False
    assert answered["feedback"]["expected"]["category_code"] == "VFP"
    page = _client(annotator).get(reverse("review:workbench", args=[sample.pk]))
    html = page.content.decode()
    assert 'data-testid="already-submitted"' in html and 'data-testid="gold-feedback"' in html
    assert "your answer differs from the expected one" in html and "No car is shown." in html


def test_without_feedback_a_gold_answer_reads_as_any_submitted_review(annotator: Any) -> None:
    sample, answered = _served_and_answered(annotator, feedback=False)
    assert answered["feedback"] is None and answered["settled_status"] is None
    html = _client(annotator).get(reverse("review:workbench", args=[sample.pk])).content.decode()
    assert 'data-testid="already-submitted"' in html
    assert "gold-feedback" not in html and "No car is shown." not in html


def test_the_queue_page_sets_the_gold_rate_and_feedback(lead: Any) -> None:
    dataset = review_dataset(0)
    client = _client(lead)
    url = reverse("review:settings", args=[dataset.pk])
    form = {"overlap": 2, "lease_minutes": 15, "blind": "on"}
    client.post(url, {**form, "gold_percent": "10", "gold_feedback": "on"})
    saved = ReviewSettings.objects.get(dataset=dataset)
    assert (saved.gold_rate, saved.gold_feedback) == (0.1, True)
    page = client.post(url, {**form, "gold_percent": "90"}, follow=True).content.decode()
    assert "Ensure this value is less than or equal to 50" in page
    assert ReviewSettings.objects.get(dataset=dataset).gold_rate == 0.1
    queue = client.get(reverse("review:queue", args=[dataset.pk])).content.decode()
    assert 'name="gold_percent"' in queue and 'value="10.0"' in queue


def test_the_gold_card_of_a_taken_down_sample_says_it_is_not_served(lead: Any) -> None:
    """Taken down, a gold item is no longer served; its card says so, not that reviewers
    are served it, and no reviewer is offered it."""
    from annotation import services as annotation_services

    dataset = review_dataset(0)
    sample = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    gold.gold_mark(sample=sample, by=lead)
    url = reverse("annotation:sample_detail", args=[sample.pk])
    page = _client(lead).get(url).content.decode()
    assert "reviewers are served it" in page and 'data-testid="gold-not-served"' not in page
    annotation_services.samples_take_down(
        dataset=dataset, samples=Sample.objects.filter(pk=sample.pk), by=lead, reason="licence"
    )
    page = _client(lead).get(url).content.decode()
    assert 'data-testid="gold-not-served"' in page
    assert "reviewers are served it" not in page
    assert gold.gold_candidates(dataset_id=dataset.pk, reviewer=lead, besides=None) == []


def test_the_sample_list_shows_leads_a_gold_column_and_filter(
    lead: Any, annotator: Any, django_assert_num_queries: Any
) -> None:
    """Leads see which samples are gold and filter on it, with no query added for the
    column; a reviewer sees neither, and their "gold" parameter is ignored."""
    dataset = review_dataset(1, members=[annotator])
    verified = [mmooc_sample(dataset, status=SampleStatus.VERIFIED) for _ in range(3)]
    gold.gold_mark_bulk(dataset=dataset, sample_ids=[s.pk for s in verified[:2]], by=None)
    url = reverse("annotation:sample_list", args=[dataset.pk])
    client = _client(lead)
    client.get(url)  # the session's first request loads what later ones find cached
    # session, user, roles, dataset, saved views, kept layout, the planner's estimate, the count
    # within its budget (savepoint, timeout, count, rollback, release), page, media, filter
    # choices (one statement, terms)
    with django_assert_num_queries(16):
        html = client.get(url).content.decode()
    assert html.count('<span class="badge">gold</span>') == 2 and 'id="filter-gold"' in html
    assert f'href="{reverse("review:gold_list", args=[dataset.pk])}"' in html
    only = client.get(url, {"gold": "true"}).content.decode()
    assert "2 samples match." in only and verified[2].external_id not in only
    assert '<option value="true" selected>' in only
    rest = client.get(url, {"gold": "false"}).content.decode()
    assert "2 samples match." in rest and verified[0].external_id not in rest
    seen = _client(annotator).get(url, {"gold": "true"}).content.decode()
    assert "4 samples match." in seen
    assert 'id="filter-gold"' not in seen and '<span class="badge">gold</span>' not in seen


def test_the_sample_list_unmarks_gold_in_bulk_and_counts_the_others_skipped(lead: Any) -> None:
    dataset = review_dataset(1)
    pending = Sample.objects.get(dataset=dataset)
    verified = [mmooc_sample(dataset, status=SampleStatus.VERIFIED) for _ in range(3)]
    gold.gold_mark_bulk(dataset=dataset, sample_ids=[s.pk for s in verified], by=None)
    client = _client(lead)
    listing = client.get(reverse("annotation:sample_list", args=[dataset.pk])).content.decode()
    bulk = reverse("review:gold_unmark_bulk", args=[dataset.pk])
    assert f'formaction="{bulk}"' in listing and "Unmark gold" in listing
    response = client.post(
        bulk, {"ids": [verified[0].pk, pending.pk], "status": "verified"}, follow=True
    )
    html = response.content.decode()
    # The pending sample is outside the filter kept by the form: it was never chosen.
    assert "1 sample is no longer a gold item." in html and "skipped" not in html
    assert response.redirect_chain[-1][0].endswith("?status=verified")
    response = client.post(bulk, {"ids": [verified[0].pk, verified[1].pk]}, follow=True)
    html = response.content.decode()
    assert "1 sample is no longer a gold item." in html
    assert "1 chosen sample was no gold item and was skipped." in html
    assert list(GoldItem.objects.values_list("sample_id", flat=True)) == [verified[2].pk]
    response = client.post(bulk, {"scope": "all", "gold": "true"}, follow=True)
    assert "1 sample is no longer a gold item." in response.content.decode()
    assert not GoldItem.objects.exists()
    assert "Tick some samples first" in client.post(bulk, {}, follow=True).content.decode()


def test_the_gold_list_shows_each_items_accuracy_in_fixed_queries(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """The lead's list of gold items costs the same queries for 1 or 6 items, answered or
    not, and shows agreed / served per item."""
    dataset, verified = gold_ready_dataset(UserFactory.create(role="annotator"), feedback=False)
    gold.gold_mark(sample=Sample.objects.select_related("dataset").get(pk=verified.pk), by=None)
    reviewers = UserFactory.create_batch(2, member_of=dataset)
    for reviewer, category in zip(reviewers, ("VFP", "MA"), strict=True):
        lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
        assert lease is not None and lease.gold
        services.review_submit(
            reviewer=reviewer,
            sample=Sample.objects.select_related("dataset").get(pk=verified.pk),
            client_uuid=uuid.uuid4(),
            decision="accept",
            values={"category_code": category},
        )
    client = _client(lead)
    url = reverse("review:gold_list", args=[dataset.pk])
    client.get(url)
    # session, user, roles, dataset, count, page of items with their samples and counts
    with django_assert_num_queries(6):
        html = client.get(url).content.decode()
    assert "1 / 2 (50 %)" in html and verified.external_id in html
    more = [mmooc_sample(dataset, status=SampleStatus.VERIFIED) for _ in range(5)]
    gold.gold_mark_bulk(dataset=dataset, sample_ids=[s.pk for s in more], by=None)
    with django_assert_num_queries(6):
        html = client.get(url).content.decode()
    assert html.count("not served yet") == 5
    detail = client.get(reverse("annotation:dataset_detail", args=[dataset.pk])).content.decode()
    assert f'href="{url}"' in detail


def test_only_leads_open_the_gold_list(annotator: Any) -> None:
    dataset = review_dataset(0, members=[annotator])
    url = reverse("review:gold_list", args=[dataset.pk])
    assert _client(annotator).get(url).status_code == 403
    detail = _client(annotator).get(reverse("annotation:dataset_detail", args=[dataset.pk]))
    assert url not in detail.content.decode()
