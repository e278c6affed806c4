"""Marking gold items from the sample page and the sample list (leads only)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Sample, SampleStatus
from review.models import GoldItem
from tests.annotation.factories import mmooc_sample
from tests.review.factories import review_dataset

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
