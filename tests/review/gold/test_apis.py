"""The gold API: leads only, readable refusals; gold items claimed and answered like others."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.urls import reverse

from annotation.models import Sample, SampleStatus
from review.gold import services as gold
from review.models import GoldAnswer, GoldItem, Review
from tests.annotation.factories import mmooc_sample
from tests.conftest import client_for
from tests.review.factories import review_dataset
from tests.review.gold.test_services import AlwaysGold

pytestmark = pytest.mark.django_db


def _url(sample: Sample) -> str:
    return reverse("api_review_gold", args=[sample.pk])


def test_only_leads_mark_gold(annotator: Any) -> None:
    dataset = review_dataset(0, members=[annotator])
    sample = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    client = client_for(annotator)
    assert client.post(_url(sample), {}, format="json").status_code == 403
    assert client.get(_url(sample)).status_code == 403
    assert client.delete(_url(sample)).status_code == 403
    listed = client.get(reverse("api_review_dataset_gold", args=[dataset.pk]))
    assert listed.status_code == 403
    unmark = reverse("api_review_dataset_gold_unmark", args=[dataset.pk])
    assert client.post(unmark, {"samples": [sample.pk]}, format="json").status_code == 403
    assert not GoldItem.objects.exists()


def test_a_lead_marks_reads_and_unmarks_a_gold_item(lead: Any) -> None:
    dataset = review_dataset(0)
    sample = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    client = client_for(lead)
    body = {
        "expected": {"decision": "accept", "category_code": "MA"},
        "explanation": "The question says the answer is MA.",
        "attention_check": True,
    }
    marked = client.post(_url(sample), body, format="json")
    assert marked.status_code == 200, marked.json()
    assert marked.json()["expected"] == {"decision": "accept", "category_code": "MA"}
    assert client.get(_url(sample)).json()["attention_check"] is True
    listed = client.get(reverse("api_review_dataset_gold", args=[dataset.pk])).json()
    assert [row["sample"] for row in listed] == [sample.pk]
    assert (listed[0]["served"], listed[0]["answered"], listed[0]["agreed"]) == (0, 0, 0)
    assert client.delete(_url(sample)).status_code == 204
    assert client.delete(_url(sample)).status_code == 404
    assert client.get(_url(sample)).status_code == 404


def test_bad_gold_marks_are_refused_with_reasons(lead: Any) -> None:
    dataset = review_dataset(1)
    pending = Sample.objects.get(dataset=dataset)
    verified = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    client = client_for(lead)
    refused = client.post(_url(pending), {}, format="json")
    assert refused.status_code == 409  # not settled yet
    assert "Only verified samples can be gold" in str(refused.json())
    bad = client.post(_url(verified), {"expected": {"category_code": "NOPE"}}, format="json")
    assert bad.status_code == 404 and "Unknown category" in str(bad.json())
    bad = client.post(_url(verified), {"expected": {"decision": "maybe"}}, format="json")
    assert bad.status_code == 400 and "Accept or reject" in str(bad.json())
    bad = client.post(_url(verified), {"expected": "accept"}, format="json")
    assert bad.status_code == 400
    assert client.post(reverse("api_review_gold", args=[10**9]), {}).status_code == 404
    assert not GoldItem.objects.exists()


def test_bulk_marking_reports_refused_and_unknown_samples(lead: Any) -> None:
    dataset = review_dataset(1)
    pending = Sample.objects.get(dataset=dataset)
    verified = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    url = reverse("api_review_dataset_gold", args=[dataset.pk])
    client = client_for(lead)
    response = client.post(url, {"samples": [verified.pk, pending.pk, 10**9]}, format="json")
    assert response.status_code == 200
    assert response.json() == {
        "marked": 1,
        "refused": [pending.external_id],
        "unknown": [10**9],
    }
    assert client.post(url, {"samples": []}, format="json").status_code == 400
    assert client.post(url, {"samples": ["x"]}, format="json").status_code == 400


def test_a_gold_item_is_claimed_and_answered_like_any_sample(
    annotator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim shows it in review; the submission answers 201 in a review's shape."""
    dataset = review_dataset(1, members=[annotator])
    verified = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    gold.gold_mark(sample=Sample.objects.select_related("dataset").get(pk=verified.pk), by=None)
    monkeypatch.setattr(gold, "_rng", AlwaysGold())
    client = client_for(annotator)
    claimed = client.post(reverse("api_review_claim", args=[dataset.pk]), {}, format="json")
    assert claimed.status_code == 200
    body = claimed.json()
    assert body["sample"]["id"] == verified.pk
    assert body["sample"]["status"] == SampleStatus.IN_REVIEW
    review = {"client_uuid": str(uuid.uuid4()), "sample": verified.pk, "decision": "accept"}
    created = client.post(reverse("api_reviews"), review, format="json")
    assert created.status_code == 201
    assert set(created.json()) >= {"id", "sample", "decision", "values", "settled_status"}
    assert created.json()["settled_status"] is None
    assert client.post(reverse("api_reviews"), review, format="json").status_code == 200
    assert GoldAnswer.objects.get(reviewer=annotator).matched
    assert not Review.objects.filter(sample=verified).exists()


def test_the_gold_rate_is_a_review_setting(lead: Any) -> None:
    dataset = review_dataset(0)
    url = reverse("api_review_settings", args=[dataset.pk])
    client = client_for(lead)
    settings = {"overlap": 2, "blind": True, "show_judge_hints": False, "lease_seconds": 900}
    assert client.get(url).json()["gold_rate"] == 0.05
    assert client.put(url, {**settings, "gold_rate": 0.1}, format="json").json()["gold_rate"] == 0.1
    assert client.put(url, settings, format="json").json()["gold_rate"] == 0.1  # kept
    assert client.put(url, {**settings, "gold_rate": 0.9}, format="json").status_code == 400
    assert client.get(url).json()["gold_feedback"] is False
    on = client.put(url, {**settings, "gold_feedback": True}, format="json").json()
    assert on["gold_feedback"] is True and on["gold_rate"] == 0.1


def test_the_sample_list_api_filters_by_gold_for_leads_only(lead: Any, annotator: Any) -> None:
    """The API's sample list takes the page's "gold" filter through the same filter code;
    a reviewer asking for it is refused, as they must not learn which samples are gold."""
    dataset = review_dataset(1, members=[annotator])
    verified = [mmooc_sample(dataset, status=SampleStatus.VERIFIED) for _ in range(3)]
    gold.gold_mark_bulk(dataset=dataset, sample_ids=[s.pk for s in verified[:2]], by=None)
    url = reverse("api_dataset_samples", args=[dataset.pk])

    def ids(**params: str) -> set[str]:
        response = client_for(lead).get(url, params)
        assert response.status_code == 200, response.json()
        return {row["external_id"] for row in response.json()["results"]}

    assert ids(gold="true") == {s.external_id for s in verified[:2]}
    others = ids(gold="false")
    assert verified[2].external_id in others and len(others) == 2
    assert client_for(lead).get(url, {"gold": "perhaps"}).status_code == 400
    refused = client_for(annotator).get(url, {"gold": "true"})
    assert refused.status_code == 403
    assert client_for(annotator).get(url).status_code == 200


def test_bulk_unmarking_counts_the_samples_that_were_no_gold_item(lead: Any) -> None:
    dataset = review_dataset(1)
    pending = Sample.objects.get(dataset=dataset)
    verified = [mmooc_sample(dataset, status=SampleStatus.VERIFIED) for _ in range(2)]
    gold.gold_mark_bulk(dataset=dataset, sample_ids=[s.pk for s in verified], by=None)
    url = reverse("api_review_dataset_gold_unmark", args=[dataset.pk])
    client = client_for(lead)
    body = {"samples": [verified[0].pk, pending.pk, 10**9]}
    response = client.post(url, body, format="json")
    assert response.status_code == 200
    assert response.json() == {"unmarked": 1, "skipped": 1}
    assert list(GoldItem.objects.values_list("sample_id", flat=True)) == [verified[1].pk]
    assert client.post(url, {"samples": []}, format="json").status_code == 400
