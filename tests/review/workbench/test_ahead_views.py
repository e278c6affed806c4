"""The workbench's next-sample endpoints (review.workbench.ahead_views): what they answer,
in a fixed number of queries, and a clear 400 for bad input."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Sample
from core.leases import OPEN_SINCE
from review.models import Slot
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory
from tests.review.factories import open_queue, review_dataset, submit

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _setup(n: int = 3, k: int = 1) -> tuple[Any, Any, Client]:
    reviewer = UserFactory.create(role="annotator")
    dataset = review_dataset(n, k=k, members=[reviewer])
    return dataset, reviewer, _client(reviewer)


def test_reserve_answers_the_next_samples_page_then_renews_it(
    django_assert_num_queries: Any,
) -> None:
    """The reservation answers the next sample's workbench (form, image, the lease to come)
    in a fixed number of queries; sent back with its token it is renewed without a page."""
    dataset, reviewer, client = _setup(4)
    held = queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    assert held is not None
    url = reverse("review:ahead", args=[dataset.pk])
    with django_assert_num_queries(17):
        response = client.post(url)
    assert response.status_code == 200
    body = response.json()
    assert body["sample"] != held.sample_id and body["renewed"] is False
    assert body["url"] == reverse("review:workbench", args=[body["sample"]])
    assert 'id="review-form"' in body["html"] and 'class="zoom-image"' in body["html"]
    assert 'id="lease-note"' in body["html"] and "do not hold a lease" not in body["html"]
    assert "2 of 4" in body["html"]  # shown once the current review is in
    with django_assert_num_queries(5):
        renewed = client.post(url, {"token": body["token"]}).json()
    assert renewed["renewed"] is True and renewed["sample"] == body["sample"]
    assert "html" not in renewed


def test_take_makes_the_reservation_the_lease_and_release_gives_it_back(
    django_assert_num_queries: Any,
) -> None:
    """Once the current review is in, take answers the lease's end; a released reservation
    is open to the queue again and can no longer be taken (409, with the reason)."""
    dataset, reviewer, client = _setup(3)
    held = queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    assert held is not None
    first = client.post(reverse("review:ahead", args=[dataset.pk])).json()
    take = reverse("review:ahead_take")
    refused = client.post(take, {"token": first["token"]})  # the current lease is still open
    assert refused.status_code == 409 and "not kept for you" in refused.json()["detail"]
    submit(reviewer, Sample.objects.get(pk=held.sample_id))
    with django_assert_num_queries(7):  # with the savepoint around the update
        taken = client.post(take, {"token": first["token"]})
    assert taken.status_code == 200 and "Your lease runs until" in taken.json()["lease_note"]
    assert Slot.objects.filter(sample_id=first["sample"], reviewer=reviewer, done=False).exists()

    second = client.post(reverse("review:ahead", args=[dataset.pk])).json()
    with django_assert_num_queries(4):
        released = client.post(reverse("review:ahead_release"), {"token": second["token"]})
    assert released.status_code == 204
    slot = Slot.objects.get(sample_id=second["sample"])
    assert slot.reviewer_id is None and slot.lease_expires_at == OPEN_SINCE
    assert client.post(take, {"token": second["token"]}).status_code == 409


def test_nothing_left_is_204() -> None:
    """The last sample for me has no next one."""
    dataset, reviewer, client = _setup(1, k=2)
    queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    assert client.post(reverse("review:ahead", args=[dataset.pk])).status_code == 204


@pytest.mark.parametrize("name", ["review:ahead_take", "review:ahead_release", "review:ahead"])
@pytest.mark.parametrize("token", ["", "garbage", "a" * 5000, "x\x00y"])
def test_bad_tokens_get_a_clear_400(name: str, token: str) -> None:
    """A missing, forged or malformed token is refused with a message, never a 500 (an empty
    one to the reservation just reserves)."""
    dataset, reviewer, client = _setup(2)
    queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    url = reverse(name, args=[dataset.pk]) if name == "review:ahead" else reverse(name)
    response = client.post(url, {"token": token})
    if name == "review:ahead" and not token:
        assert response.status_code == 200
        return
    assert response.status_code == 400
    assert response.json()["detail"]


def test_another_reviewers_token_is_refused() -> None:
    """A token is its reviewer's: someone else can neither take nor release it."""
    dataset, reviewer, client = _setup(3)
    queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    token = client.post(reverse("review:ahead", args=[dataset.pk])).json()["token"]
    other = UserFactory.create(role="annotator")
    open_queue(dataset, k=1, members=[other])
    for name in ("review:ahead_take", "review:ahead_release"):
        response = _client(other).post(reverse(name), {"token": token})
        assert response.status_code == 400 and "not valid" in response.json()["detail"]


def test_who_may_reserve(lead: Any, auditor: Any) -> None:
    """Only a reviewer of the dataset reserves: 404 when it is not theirs to see, 403 for an
    auditor; GET is not allowed."""
    dataset, _reviewer, client = _setup(2)
    outsider = UserFactory.create(role="annotator")
    url = reverse("review:ahead", args=[dataset.pk])
    assert _client(outsider).post(url).status_code == 404
    assert _client(auditor).post(url).status_code == 403
    assert client.get(url).status_code == 405
    assert client.post(reverse("review:ahead", args=[999999])).status_code == 404
