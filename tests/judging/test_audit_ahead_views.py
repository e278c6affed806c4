"""The endpoints of the auditor's next item: the audit's auditors only, the reserved item's page
in a fixed number of queries, bad tokens refused with a reason, take and release."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.timezone import now

from core import roles
from judging.audit import services
from judging.models import AuditItem, AuditLease, AuditSet
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af
from tests.support.http import browser

pytestmark = pytest.mark.django_db

TAKE = reverse("judging:audit_ahead_take")
RELEASE = reverse("judging:audit_ahead_release")


def _ahead(audit_set: AuditSet) -> str:
    return reverse("judging:audit_ahead", args=[audit_set.pk])


def _rate_current(audit_set: AuditSet, auditor: Any) -> None:
    lease = services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert lease is not None
    services.audit_rating_submit(
        auditor=auditor,
        item=AuditItem.objects.select_related("audit_set").get(pk=lease.item_id),
        submission_uuid=uuid.uuid4(),
        **af.rubric_for(audit_set.task),
    )


def test_only_the_audits_auditors_reserve_take_or_release(
    audit_set: AuditSet, lead: Any, auditor: Any, annotator: Any
) -> None:
    """Member auditors and leads reserve; annotators (members or not) get 403, auditors of
    other datasets 404, anonymous visitors are sent to log in."""
    af.add_member(audit_set.dataset, annotator)
    outsider = UserFactory.create(role=roles.AUDITOR)
    assert browser(auditor).post(_ahead(audit_set)).status_code == 200
    assert browser(lead).post(_ahead(audit_set)).status_code == 200
    assert browser(annotator).post(_ahead(audit_set)).status_code == 403
    assert browser(outsider).post(_ahead(audit_set)).status_code == 404
    assert Client().post(_ahead(audit_set)).status_code == 302
    token = browser(auditor).post(_ahead(audit_set)).json()["token"]
    for url in (TAKE, RELEASE):
        assert browser(annotator).post(url, {"token": token}).status_code == 403
        assert browser(outsider).post(url, {"token": token}).status_code == 400


def test_the_reserved_items_page_in_a_fixed_number_of_queries(
    audit_set: AuditSet, auditor: Any, django_assert_num_queries: Any
) -> None:
    """The answer carries the reserved item's rating page (its question, the form posting
    without script, no lease notice) and costs the same queries for any item."""
    client = browser(auditor)
    client.post(_ahead(audit_set))  # the session and caches warm
    _rate_current(audit_set, auditor)
    # The session and user, their roles, the audit set; the reservation; the item with its
    # sample and response, its media, the auditor's lease and rating of it.
    with django_assert_num_queries(9):
        answer = client.post(_ahead(audit_set))
    body = answer.json()
    assert answer.status_code == 200 and body["renewed"] is False
    item = AuditItem.objects.select_related("sample").get(pk=body["item"])
    assert body["url"] == reverse("judging:audit_rate", args=[item.pk])
    assert item.sample.question in body["html"]
    assert reverse("judging:audit_submit", args=[item.pk]) in body["html"]
    assert 'id="lease-note"' in body["html"] and "do not hold a lease" not in body["html"]
    lease = AuditLease.objects.get(item=item, auditor__isnull=True, lease_expires_at__gt=now())
    assert lease.lease_expires_at.isoformat() == body["expires_at"]


def test_renewing_answers_no_page(audit_set: AuditSet, auditor: Any) -> None:
    """With the token of a reservation still theirs, the same item is renewed, no page sent."""
    client = browser(auditor)
    first = client.post(_ahead(audit_set)).json()
    again = client.post(_ahead(audit_set), {"token": first["token"]}).json()
    assert again["renewed"] is True and again["item"] == first["item"] and "html" not in again
    assert again["expires_at"] >= first["expires_at"]


def test_a_bad_token_is_a_readable_400(audit_set: AuditSet, auditor: Any) -> None:
    """A forged token gets 400 with the reason, on every endpoint that takes one."""
    client = browser(auditor)
    for url in (_ahead(audit_set), TAKE, RELEASE):
        answer = client.post(url, {"token": "forged"})
        assert answer.status_code == 400
        assert json.loads(answer.content)["detail"] == "This reservation is not valid."


def test_take_after_the_rating_then_409_once_gone(audit_set: AuditSet, auditor: Any) -> None:
    """Taken after the current rating, the reservation is the auditor's lease (with its time);
    a second take answers 409 with the reason."""
    client = browser(auditor)
    services.audit_claim(audit_set=audit_set, auditor=auditor)
    reserved = client.post(_ahead(audit_set)).json()
    assert client.post(TAKE, {"token": reserved["token"]}).status_code == 409  # lease held
    lease = AuditLease.objects.get(audit_set=audit_set, auditor=auditor, done=False)
    services.audit_rating_submit(
        auditor=auditor,
        item=AuditItem.objects.select_related("audit_set").get(pk=lease.item_id),
        submission_uuid=uuid.uuid4(),
        **af.rubric_for(audit_set.task),
    )
    taken = client.post(TAKE, {"token": reserved["token"]})
    assert taken.status_code == 200 and taken.json()["item"] == reserved["item"]
    assert "runs until" in taken.json()["lease_note"]
    held = AuditLease.objects.get(audit_set=audit_set, auditor=auditor, done=False)
    assert held.item_id == reserved["item"]
    gone = client.post(TAKE, {"token": reserved["token"]})
    assert gone.status_code == 409 and "not kept for you" in gone.json()["detail"]


def test_release_gives_it_back_and_nothing_left_is_204(auditor: Any) -> None:
    """A released reservation is claimable at once; with nothing left to rate, 204."""
    dataset, _ = af.scoring_dataset(n_samples=2, models=("gpt-4o",))
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=1, double_rating_fraction=0)
    client = browser(auditor)
    reserved = client.post(_ahead(audit_set)).json()
    assert client.post(RELEASE, {"token": reserved["token"]}).status_code == 204
    lease = services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert lease is not None and lease.item_id == reserved["item"]
    assert client.post(_ahead(audit_set)).status_code == 204  # the one item is theirs
