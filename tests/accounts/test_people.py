"""The People page and its services (accounts/people.py): roles, datasets, deactivation.

A deactivated person's open session and API token stop at once, their password no longer
signs them in, and their reviews stay with their name.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts import people
from accounts.models import AccessEvent, AccessEventKind
from annotation.models import DatasetMembership, Sample
from core.roles import ANNOTATOR, AUDITOR, LEAD
from review.models import Review
from tests.annotation.factories import UserFactory, mmooc_dataset
from tests.review.factories import review_dataset

pytestmark = pytest.mark.django_db


def _browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _groups(user: Any) -> set[str]:
    return set(get_user_model().objects.get(pk=user.pk).groups.values_list("name", flat=True))


def test_the_people_page_lists_everyone_with_roles_datasets_and_work(
    lead: Any, django_assert_max_num_queries: Any
) -> None:
    """Each person with their roles, datasets and roles there, reviews done; in a number of
    queries that does not grow with the people."""
    dataset = review_dataset(2, k=1)
    workers = [UserFactory.create(role=ANNOTATOR) for _ in range(4)]
    for worker in workers:
        people.person_add_to_dataset(person=worker, dataset=dataset, roles={ANNOTATOR}, actor=lead)
    reviewer = workers[0]
    sample = Sample.objects.filter(dataset=dataset).first()
    assert sample is not None
    response = APIClient()
    response.force_authenticate(reviewer)
    submitted = response.post(
        reverse("api_reviews"),
        {"client_uuid": str(uuid.uuid4()), "sample": sample.pk, "decision": "accept"},
        format="json",
    )
    assert submitted.status_code == 201
    browser = _browser(lead)
    browser.get(reverse("accounts:people"))
    with django_assert_max_num_queries(12):
        page = browser.get(reverse("accounts:people")).content.decode()
    assert page.count('class="inline person-dataset"') == 4
    row = page.split(f'data-person="{reviewer.username}"')[1].split("</tr>")[0]
    assert '<td class="num person-reviews">1</td>' in row
    assert dataset.name in row


def test_a_lead_changes_a_site_role_and_the_datasets_follow(lead: Any) -> None:
    """Annotator → auditor: every membership becomes auditor; → no access: out of every
    dataset; → lead: the lead role is added."""
    person = UserFactory.create(role=ANNOTATOR)
    one, two = mmooc_dataset(), mmooc_dataset()
    for dataset in (one, two):
        people.person_add_to_dataset(person=person, dataset=dataset, roles={ANNOTATOR}, actor=lead)
    browser = _browser(lead)
    browser.post(reverse("accounts:person_role", args=[person.pk]), {"role": AUDITOR})
    assert _groups(person) == {AUDITOR}
    flags = set(DatasetMembership.objects.filter(user=person).values_list("annotates", "audits"))
    assert flags == {(False, True)}
    browser.post(reverse("accounts:person_role", args=[person.pk]), {"role": LEAD})
    assert _groups(person) == {AUDITOR, LEAD}
    browser.post(reverse("accounts:person_role", args=[person.pk]), {"role": "none"})
    assert _groups(person) == set()
    assert not DatasetMembership.objects.filter(user=person).exists()
    kinds = list(
        AccessEvent.objects.filter(subject=person).values_list("kind", flat=True).order_by("id")
    )
    assert kinds.count(AccessEventKind.ROLE_CHANGED) == 3
    assert kinds.count(AccessEventKind.MEMBER_REMOVED) == 2


def test_the_people_page_changes_the_role_in_one_dataset_only(lead: Any) -> None:
    person = UserFactory.create(role=ANNOTATOR)
    one, two = mmooc_dataset(), mmooc_dataset()
    browser = _browser(lead)
    url = reverse("accounts:person_dataset", args=[person.pk])
    for dataset in (one, two):
        browser.post(url, {"dataset": dataset.pk, "role": ANNOTATOR})
    page = browser.post(url, {"dataset": one.pk, "role": AUDITOR}, follow=True).content.decode()
    assert "is saved" in page.replace("&#x27;", "'")
    assert DatasetMembership.objects.get(user=person, dataset=one).audits
    assert DatasetMembership.objects.get(user=person, dataset=two).annotates
    assert _groups(person) == {ANNOTATOR, AUDITOR}
    browser.post(url, {"remove": two.pk})
    assert not DatasetMembership.objects.filter(user=person, dataset=two).exists()
    assert _groups(person) == {AUDITOR}
    bad = browser.post(url, {"dataset": one.pk, "role": LEAD}, follow=True).content.decode()
    assert "Choose a dataset and a role." in bad


def test_deactivation_ends_the_session_and_the_token_at_once_and_keeps_the_reviews(
    lead: Any,
) -> None:
    """The person's open browser session is signed out on its next request, their token is
    refused, their password gives "deactivated"; their review stays, with their name."""
    dataset = review_dataset(1, k=1)
    person = UserFactory.create(role=ANNOTATOR)
    people.person_add_to_dataset(person=person, dataset=dataset, roles={ANNOTATOR}, actor=lead)
    session = _browser(person)
    token = Token.objects.create(user=person)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    sample = Sample.objects.get(dataset=dataset)
    review = {"client_uuid": str(uuid.uuid4()), "sample": sample.pk, "decision": "accept"}
    assert api.post(reverse("api_reviews"), review, format="json").status_code == 201
    assert session.get(reverse("annotation:dataset_list")).status_code == 200

    page = _browser(lead).post(
        reverse("accounts:person_activation", args=[person.pk]), {"active": "0"}, follow=True
    )
    assert "is deactivated" in page.content.decode()
    after = session.get(reverse("annotation:dataset_list"))
    assert after.status_code == 302 and "/login/" in after["Location"]
    assert api.get(reverse("api_me")).status_code in (401, 403)
    login = Client().post(
        reverse("login"), {"username": person.username, "password": "pw-for-tests-1"}
    )
    assert login.status_code == 200
    assert "deactivated" in login.content.decode()
    assert Review.objects.filter(reviewer=person).count() == 1
    listed = _browser(lead).get(reverse("accounts:people")).content.decode()
    assert "Reactivate" in listed.split(f'data-person="{person.username}"')[1]

    _browser(lead).post(reverse("accounts:person_activation", args=[person.pk]), {"active": "1"})
    fresh = Client().post(
        reverse("login"), {"username": person.username, "password": "pw-for-tests-1"}
    )
    assert fresh.status_code == 302
    kinds = set(AccessEvent.objects.filter(subject=person).values_list("kind", flat=True))
    assert {AccessEventKind.DEACTIVATED, AccessEventKind.REACTIVATED} <= kinds


def test_a_lead_cannot_lock_the_site_out(lead: Any) -> None:
    """The only active lead can neither be deactivated, nor lose the lead role; nobody
    deactivates themselves."""
    other = UserFactory.create(role=ANNOTATOR)
    with pytest.raises(ValidationError, match="yourself"):
        people.person_deactivate(person=lead, actor=lead)
    with pytest.raises(ValidationError, match="only active lead"):
        people.person_set_role(person=lead, role=ANNOTATOR, actor=other)
    with pytest.raises(ValidationError, match="only active lead"):
        people.person_deactivate(person=lead, actor=other)
    second = UserFactory.create(role=LEAD)
    with pytest.raises(ValidationError, match="your own lead role"):
        people.person_set_role(person=lead, role=ANNOTATOR, actor=lead)
    people.person_set_role(person=lead, role=ANNOTATOR, actor=second)
    assert _groups(lead) == {ANNOTATOR}


def test_only_leads_manage_people(annotator: Any, auditor: Any) -> None:
    for user in (annotator, auditor):
        browser = _browser(user)
        assert browser.get(reverse("accounts:people")).status_code == 403
        assert browser.get(reverse("accounts:access_log")).status_code == 403
        post = browser.post(reverse("accounts:person_role", args=[user.pk]), {"role": LEAD})
        assert post.status_code == 403
    assert _groups(annotator) == {ANNOTATOR}


def test_a_person_without_any_role_lands_on_a_page_that_says_so() -> None:
    """No role and no dataset: the home page says access must be granted (403)."""
    nobody = UserFactory.create()
    browser = _browser(nobody)
    home = browser.get("/", follow=True)
    assert home.status_code == 403
    assert "access must be granted" in home.content.decode()
