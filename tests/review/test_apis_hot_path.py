"""The review loop's hot path (review/apis.py, review/queue/statements.py,
review/services/submit_sql.py, core/authentication.py): a reviewer signed in with an API token
claims and submits in a fixed, small number of statements, whatever the size of the dataset."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.urls import reverse, set_script_prefix
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import services as annotation_services
from annotation.models import Sample, SampleStatus
from review.models import Outcome, Review, Slot
from review.queue.assignments import samples_assign
from tests.annotation.factories import UserFactory, mmooc_sample
from tests.review.factories import review_dataset

pytestmark = pytest.mark.django_db

# The token with its user and roles; inside the savepoint pair the test transaction adds, the
# claim statement, which also tests the dataset's visibility and reads the sample's card.
CLAIM = 4
# The token; the savepoint pair; the slot lock (reading the sample with its dataset, if
# visible, and the overlap, replay, draft and skip tests); one statement writing the review,
# its slot and the sample's first status step with its history or, settling, that statement
# reading the round's other reviews and one more moving the status with its history, the
# outcome and the summary note.
SUBMIT = 5
SETTLE = 6


def _token_client(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _loop(client: Any, dataset_id: int) -> tuple[int, Any]:
    claimed = client.post(reverse("api_review_claim", args=[dataset_id]), {}, format="json")
    assert claimed.status_code == 200
    sample_id = claimed.json()["sample"]["id"]
    body = {"client_uuid": str(uuid.uuid4()), "sample": sample_id, "decision": "accept"}
    return sample_id, body


@pytest.mark.parametrize("size", [2, 40])
def test_claim_and_submit_run_a_fixed_number_of_statements(
    size: int, django_assert_num_queries: Any
) -> None:
    """For a queue of 2 samples and one of 40 alike: a claim, a first review and the review
    that settles the sample each cost the same few statements, the permission checks
    included (the token brings the user's roles)."""
    first, second = (UserFactory.create(role="annotator") for _ in range(2))
    dataset = review_dataset(size, k=2, members=[first, second])
    clients = [_token_client(first), _token_client(second)]
    with django_assert_num_queries(CLAIM):
        sample_id, body = _loop(clients[0], dataset.pk)
    with django_assert_num_queries(SUBMIT):
        assert clients[0].post(reverse("api_reviews"), body, format="json").status_code == 201
    with django_assert_num_queries(CLAIM):
        again, body = _loop(clients[1], dataset.pk)
    assert again == sample_id  # the queue serves the sample's second slot next
    with django_assert_num_queries(SETTLE):
        created = clients[1].post(reverse("api_reviews"), body, format="json")
    assert created.json()["settled_status"] == SampleStatus.VERIFIED
    assert Outcome.objects.get(sample_id=sample_id).status == SampleStatus.VERIFIED


def test_a_claim_serving_an_assigned_sample_costs_the_same_statements(
    django_assert_num_queries: Any, lead: Any
) -> None:
    """A claim that serves an assigned sample (closing the assignment and freeing its other
    slot in the same statement) costs what any claim costs; so does the next one, another
    reviewer's."""
    first, second = (UserFactory.create(role="annotator") for _ in range(2))
    dataset = review_dataset(3, k=2, members=[first, second])
    head, *_rest, last = Sample.objects.filter(dataset=dataset).order_by("pk")
    samples_assign(dataset=dataset, sample_ids=[last.pk], assignees=[first.username], by=lead)
    client, other = _token_client(first), _token_client(second)
    with django_assert_num_queries(CLAIM):
        sample_id, body = _loop(client, dataset.pk)
    assert sample_id == last.pk
    assert client.post(reverse("api_reviews"), body, format="json").status_code == 201
    with django_assert_num_queries(CLAIM):
        again, _body = _loop(other, dataset.pk)
    assert again == head.pk  # the queue's own order for everyone else


def test_submit_answers_the_review_as_the_serializer_did(annotator: Any) -> None:
    """The submit answers every field of ``ReviewOutput``, typed."""
    dataset = review_dataset(1, k=2, members=[annotator])
    client = _token_client(annotator)
    sample_id, body = _loop(client, dataset.pk)
    body |= {"values": {"scenario": "math"}, "clarity": 4, "note": " fine "}
    answer = client.post(reverse("api_reviews"), body, format="json").json()
    assert set(answer) == {
        "id", "sample", "client_uuid", "decision", "reject_reason", "values", "clarity",
        "naturalness", "image_aligned", "audio_aligned", "note", "seconds_spent",
        "created_at", "settled_status", "feedback",
    }  # fmt: skip
    assert answer["sample"] == sample_id
    assert answer["client_uuid"] == body["client_uuid"]
    assert (answer["values"], answer["clarity"], answer["note"]) == (
        {"scenario": "math"},
        4,
        "fine",
    )
    assert answer["created_at"].endswith("Z")
    assert answer["settled_status"] is None and answer["feedback"] is None


def test_a_token_reviewer_outside_the_dataset_gets_404_and_an_auditor_403(auditor: Any) -> None:
    """The claim and the submission refuse as the pages do: 404 for a dataset or sample the
    reviewer cannot see, 403 for a member who is no annotator."""
    dataset = review_dataset(1)
    outsider = UserFactory.create(role="annotator")
    client = _token_client(outsider)
    assert client.post(reverse("api_review_claim", args=[dataset.pk]), {}).status_code == 404
    sample = Sample.objects.filter(dataset=dataset).first()
    assert sample is not None
    body = {"client_uuid": str(uuid.uuid4()), "sample": sample.pk, "decision": "accept"}
    assert client.post(reverse("api_reviews"), body, format="json").status_code == 404
    annotation_services.dataset_add_member(dataset=dataset, user=auditor)
    refused = _token_client(auditor).post(reverse("api_review_claim", args=[dataset.pk]), {})
    assert refused.status_code == 403


def test_an_inactive_or_unknown_token_is_refused(annotator: Any) -> None:
    """A token of a deactivated user, or no such token, gets 403 with the reason."""
    dataset = review_dataset(1, members=[annotator])
    client = _token_client(annotator)
    annotator.is_active = False
    annotator.save()
    refused = client.post(reverse("api_review_claim", args=[dataset.pk]), {})
    assert refused.status_code in (401, 403)
    assert "inactive" in refused.json()["detail"]
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    unknown = stranger.post(reverse("api_review_claim", args=[dataset.pk]), {})
    assert unknown.status_code in (401, 403)
    assert "Invalid token" in unknown.json()["detail"]


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"client_uuid", "sample", "decision"}),
        ([], {"non_field_errors"}),
        (
            {"sample": "x", "decision": "perhaps", "client_uuid": "u"},
            {"sample", "decision", "client_uuid"},
        ),
        ({"note": "x" * 5001, "seconds_spent": -1}, {"note", "seconds_spent"}),
        (
            {"clarity": "high", "image_aligned": "maybe", "values": []},
            {"clarity", "image_aligned", "values"},
        ),
    ],
)
def test_a_bad_submission_names_every_bad_field(
    annotator: Any, body: Any, fields: set[str]
) -> None:
    """A bad body gets 400 with a message for every bad or missing field, and nothing is
    written."""
    dataset = review_dataset(1, members=[annotator])
    client = _token_client(annotator)
    sample_id, good = _loop(client, dataset.pk)
    if isinstance(body, dict) and body and "sample" not in body:
        body = {**good, **body}
    answer = client.post(reverse("api_reviews"), body, format="json")
    assert answer.status_code == 400
    errors = answer.json()
    assert fields <= set(errors)
    assert all(isinstance(errors[name], list) and errors[name][0] for name in fields)
    assert not Review.objects.filter(sample_id=sample_id).exists()


def test_the_claims_urls_are_the_reversed_ones_under_any_script_prefix(annotator: Any) -> None:
    """The claim's workbench and media URLs are what ``reverse`` gives, also when the site is
    served under a path prefix."""
    dataset = review_dataset(2, k=1, members=[annotator])
    client = _token_client(annotator)
    claim = reverse("api_review_claim", args=[dataset.pk])
    for prefix in ("/", "/studio/"):
        set_script_prefix(prefix)  # as the WSGI handler sets it from SCRIPT_NAME
        try:
            claimed = client.post(claim, {}, format="json").json()
            sample = claimed["sample"]
            assert claimed["url"] == reverse("review:workbench", args=[sample["id"]])
            assert [m["url"] for m in sample["media"]] == [
                reverse("annotation:media_file", args=[m["asset_id"]]) for m in sample["media"]
            ]
            assert sample["media"] and claimed["url"].startswith(prefix)
        finally:
            set_script_prefix("/")


def test_a_submission_out_of_reach_or_wrong_writes_nothing(annotator: Any) -> None:
    """The submit reads its sample in the slot lock's statement and answers as before: 404 for
    a sample of a dataset the reviewer is no member of (its slots left as they were) or an id
    that names none, however large; 409 for a sample they see that has no slot open; 400 for
    edits outside the taxonomy, after which the same lease still takes a good review."""
    dataset = review_dataset(1, members=[annotator])
    client = _token_client(annotator)
    sample_id, body = _loop(client, dataset.pk)
    other = review_dataset(1)
    foreign = Sample.objects.get(dataset=other)
    slots = list(Slot.objects.filter(sample=foreign).values_list("reviewer_id", "done"))
    for missing in (foreign.pk, 2**63, 10**30):
        answer = client.post(reverse("api_reviews"), {**body, "sample": missing}, format="json")
        assert answer.status_code == 404, missing
    assert list(Slot.objects.filter(sample=foreign).values_list("reviewer_id", "done")) == slots
    settled = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    answer = client.post(reverse("api_reviews"), {**body, "sample": settled.pk}, format="json")
    assert answer.status_code == 409
    bad = {**body, "values": {"scenario": "no such scenario"}}
    # A code the taxonomy lacks is a 404 (core.api.NOT_FOUND_CODES).
    assert client.post(reverse("api_reviews"), bad, format="json").status_code == 404
    assert not Review.objects.exists()
    assert client.post(reverse("api_reviews"), body, format="json").status_code == 201
    assert Review.objects.get().sample_id == sample_id
