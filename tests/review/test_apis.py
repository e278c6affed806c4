"""The review API: permissions, shapes, idempotency, readable errors and query counts."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services as annotation_services
from annotation.models import Sample
from review.models import Review, ReviewSettings
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory, mmooc_sample
from tests.conftest import client_for
from tests.review.factories import review_dataset

pytestmark = pytest.mark.django_db

# token-free test auth: the user's roles; on PostgreSQL one statement claiming with the
# dataset's visibility test and reading the sample's fields and media, inside the savepoint
# pair the test transaction adds; elsewhere the dataset (with the lead test inside it), the
# settings, held lease, candidate and update, and the sample's fields and media
CLAIM_QUERIES = 4


def _claim(client: Any, dataset_id: int, **body: Any) -> Any:
    return client.post(reverse("api_review_claim", args=[dataset_id]), body, format="json")


def test_claim_leases_a_sample_to_members_only(annotator: Any) -> None:
    """Members get a leased sample with its media; non-members 404; the anonymous 401/403."""
    dataset = review_dataset(1)
    assert _claim(client_for(annotator), dataset.pk).status_code == 404
    annotation_services.dataset_add_member(dataset=dataset, user=annotator)
    response = _claim(client_for(annotator), dataset.pk)
    assert response.status_code == 200
    body = response.json()
    assert body["sample"]["dataset"] == dataset.pk
    assert body["sample"]["media"][0]["role"] == "image"
    assert body["url"] == reverse("review:workbench", args=[body["sample"]["id"]])
    assert body["lease"]["resumed"] is False
    assert _claim(APIClient(), dataset.pk).status_code in (401, 403)


def test_claim_answers_204_when_nothing_is_left(lead: Any) -> None:
    """Once the reviewer has reviewed everything, claim says 204."""
    dataset = review_dataset(1, k=2)
    client = client_for(lead)
    sample_id = _claim(client, dataset.pk).json()["sample"]["id"]
    created = client.post(
        reverse("api_reviews"),
        {"client_uuid": str(uuid.uuid4()), "sample": sample_id, "decision": "accept"},
        format="json",
    )
    assert created.status_code == 201
    assert _claim(client, dataset.pk).status_code == 204


def test_claim_runs_a_fixed_number_of_queries(django_assert_num_queries: Any) -> None:
    """Claiming costs the same queries for a queue of 2 samples and one of 40."""
    for size in (2, 40):
        dataset = review_dataset(size)
        for _ in range(size):  # half the slots already taken by others
            queue_services.slot_claim(dataset=dataset, reviewer=UserFactory.create())
        client = client_for(UserFactory.create(role="lead"))
        with django_assert_num_queries(CLAIM_QUERIES):
            assert _claim(client, dataset.pk).status_code == 200


def test_submit_is_idempotent_and_conflicts_are_409(lead: Any) -> None:
    """The same client_uuid returns 200 with the same review; a second review is 409."""
    dataset = review_dataset(1, k=2)
    client = client_for(lead)
    sample_id = _claim(client, dataset.pk).json()["sample"]["id"]
    body = {
        "client_uuid": str(uuid.uuid4()),
        "sample": sample_id,
        "decision": "accept",
        "values": {"scenario": "math"},
        "clarity": 5,
    }
    first = client.post(reverse("api_reviews"), body, format="json")
    again = client.post(reverse("api_reviews"), body, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    assert first.json()["values"]["scenario"] == "math"
    other = client.post(
        reverse("api_reviews"), {**body, "client_uuid": str(uuid.uuid4())}, format="json"
    )
    assert other.status_code == 409
    assert Review.objects.count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"decision": "reject"},
        {"decision": "accept", "values": {"colour": "red"}},
        {"decision": "accept", "clarity": 0},
        {"decision": "accept", "client_uuid": "not-a-uuid"},
        {"decision": "accept", "values": "text"},
        {"decision": "perhaps"},
    ],
)
def test_bad_submissions_are_400(lead: Any, body: dict[str, Any]) -> None:
    """Bad input gets a readable 400, never a 500."""
    dataset = review_dataset(1)
    client = client_for(lead)
    sample_id = _claim(client, dataset.pk).json()["sample"]["id"]
    payload = {"client_uuid": str(uuid.uuid4()), "sample": sample_id, **body}
    response = client.post(reverse("api_reviews"), payload, format="json")
    assert response.status_code == 400
    assert response.json()


@pytest.mark.parametrize(
    ("values", "status", "words"),
    [
        ({"category_code": "NOPE"}, 404, "Unknown category “NOPE”"),
        ({"safety_label": "safe"}, 409, "not a field of this dataset's samples"),
    ],
)
def test_an_unknown_code_is_404_and_a_field_of_the_other_kind_409(
    lead: Any, values: dict[str, str], status: int, words: str
) -> None:
    """A category the taxonomy lacks names nothing that exists: 404; a trimodal field on an
    image dataset's sample conflicts with the dataset's kind: 409; both say why."""
    dataset = review_dataset(1)
    client = client_for(lead)
    sample_id = _claim(client, dataset.pk).json()["sample"]["id"]
    payload = {"client_uuid": str(uuid.uuid4()), "sample": sample_id, "decision": "accept"}
    response = client.post(reverse("api_reviews"), {**payload, "values": values}, format="json")
    assert response.status_code == status
    assert any(words in message for message in response.json()["detail"])


def test_submit_on_an_invisible_sample_is_404(annotator: Any) -> None:
    """A reviewer cannot review a sample of a dataset they are not a member of."""
    sample = mmooc_sample()
    response = client_for(annotator).post(
        reverse("api_reviews"),
        {"client_uuid": str(uuid.uuid4()), "sample": sample.pk, "decision": "accept"},
        format="json",
    )
    assert response.status_code == 404


def test_draft_skip_and_comments(lead: Any) -> None:
    """Drafts round-trip, a skip needs a reason, comments are listed with their author."""
    dataset = review_dataset(1)
    client = client_for(lead)
    sample_id = _claim(client, dataset.pk).json()["sample"]["id"]
    draft_url = reverse("api_review_draft", args=[sample_id])
    assert client.get(draft_url).status_code == 404
    assert client.put(draft_url, {"payload": {"k": 1}}, format="json").status_code == 204
    assert client.get(draft_url).json() == {"payload": {"k": 1}}
    assert client.put(draft_url, {"payload": "x"}, format="json").status_code == 400
    skip_url = reverse("api_review_skip", args=[sample_id])
    assert client.post(skip_url, {"reason": ""}, format="json").status_code == 400
    assert client.post(skip_url, {"reason": "broken image"}, format="json").status_code == 204
    assert _claim(client, dataset.pk).status_code == 204
    assert _claim(client, dataset.pk, skipped=True).status_code == 200
    comments_url = reverse("api_review_comments", args=[sample_id])
    assert client.post(comments_url, {"text": "check licence"}, format="json").status_code == 201
    assert [c["text"] for c in client.get(comments_url).json()] == ["check licence"]


def test_blind_review_hides_other_reviewers_comments(lead: Any, annotator: Any) -> None:
    """In blind review an annotator sees only their own comments."""
    dataset = review_dataset(1, members=[annotator])
    sample = Sample.objects.get(dataset=dataset)
    url = reverse("api_review_comments", args=[sample.pk])
    client_for(lead).post(url, {"text": "lead note"}, format="json")
    client_for(annotator).post(url, {"text": "mine"}, format="json")
    assert [c["text"] for c in client_for(annotator).get(url).json()] == ["mine"]
    assert len(client_for(lead).get(url).json()) == 2


def test_settings_and_queue_are_for_leads(lead: Any, annotator: Any) -> None:
    """Annotators read the settings but cannot change them or open the queue."""
    dataset = review_dataset(1, members=[annotator])
    url = reverse("api_review_settings", args=[dataset.pk])
    body = {"overlap": 3, "blind": False, "show_judge_hints": True, "lease_seconds": 600}
    assert client_for(annotator).get(url).json()["overlap"] == 2
    assert client_for(annotator).put(url, body, format="json").status_code == 403
    assert client_for(lead).put(url, body, format="json").status_code == 200
    assert ReviewSettings.objects.get(dataset=dataset).overlap == 3
    bad = client_for(lead).put(url, {**body, "overlap": 50}, format="json")
    assert bad.status_code == 400
    queue_url = reverse("api_review_queue", args=[dataset.pk])
    assert client_for(annotator).post(queue_url).status_code == 403
    assert client_for(lead).post(queue_url).json() == {"created": 0}


def test_the_thresholds_that_flag_reviewers_are_set_by_api(lead: Any) -> None:
    """``min_gold_accuracy`` (0 to 1) and ``min_gold_items`` (at least 1) are saved, kept when
    left out, and out-of-range values get a 400 naming the field."""
    dataset = review_dataset(1)
    url = reverse("api_review_settings", args=[dataset.pk])
    body = {"overlap": 2, "blind": True, "show_judge_hints": False, "lease_seconds": 600}
    saved = client_for(lead).put(
        url, {**body, "min_gold_accuracy": 0.8, "min_gold_items": 5}, format="json"
    )
    assert (saved.json()["min_gold_accuracy"], saved.json()["min_gold_items"]) == (0.8, 5)
    kept = client_for(lead).put(url, body, format="json").json()
    assert (kept["min_gold_accuracy"], kept["min_gold_items"]) == (0.8, 5)
    for field, value in (("min_gold_accuracy", 1.5), ("min_gold_items", 0)):
        bad = client_for(lead).put(url, {**body, field: value}, format="json")
        assert bad.status_code == 400 and field in bad.json()
    assert ReviewSettings.objects.get(dataset=dataset).min_gold_items == 5


def test_adjudication_api(lead: Any, annotator: Any) -> None:
    """Only leads adjudicate; a note is required."""
    dataset = review_dataset(1, members=[annotator])
    sample = Sample.objects.get(dataset=dataset)
    url = reverse("api_review_adjudication", args=[sample.pk])
    body = {"decision": "reject", "reject_reason": "duplicate", "note": "same as q1"}
    assert client_for(annotator).post(url, body, format="json").status_code == 403
    assert client_for(lead).post(url, {**body, "note": ""}, format="json").status_code == 400
    response = client_for(lead).post(url, body, format="json")
    assert response.status_code == 200
    assert response.json()["status"] == "rejected"


def test_a_reviewer_amends_their_review_by_api_until_settled() -> None:
    """PUT on one's own review changes it (200); another reviewer's is 404; once the sample
    is settled the answer is 409 and the review stays."""
    from tests.review.factories import logicvista_dataset, submit

    dataset = logicvista_dataset(1)
    sample = Sample.objects.select_related("dataset").get(dataset=dataset)
    author, other = UserFactory.create(role="annotator"), UserFactory.create(role="annotator")
    for user in (author, other):
        annotation_services.dataset_add_member(dataset=dataset, user=user)
    review = submit(author, sample).review
    url = reverse("api_review_amend", args=[review.pk])
    body = {"decision": "accept", "values": {"category_code": "inductive"}, "clarity": 5}
    assert client_for(other).put(url, body, format="json").status_code == 404
    response = client_for(author).put(url, body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["values"] == {"category_code": "inductive"}
    submit(other, Sample.objects.select_related("dataset").get(pk=sample.pk))
    late = client_for(author).put(url, {"decision": "reject", "reject_reason": "invalid"})
    assert late.status_code == 409
    assert Review.objects.get(pk=review.pk).decision == "accept"
