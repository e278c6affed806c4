"""A member works in each dataset in the roles their membership there holds.

One person may be an annotator in one dataset and an auditor in another (or both in one). The
SQL function of the membership test (``annotation_dataset_visible``, which the review loop's
statements call) and the ORM selector built on it (``selectors.dataset_list_visible``) read
the same membership flags; the site-wide role groups that the pages test before a dataset is
named follow the memberships.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import connection
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import selectors, services
from annotation.models import Dataset, DatasetMembership, Sample
from core import roles
from core.roles import ANNOTATOR, AUDITOR
from judging.models import AuditItem
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.conftest import client_for
from tests.judging import audit_factories as af
from tests.review.factories import open_queue, review_dataset


def _visible_by_sql(user: Any, dataset: Dataset, role: str | None) -> bool:
    """The membership test as the review loop's statements call it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT annotation_dataset_visible(%s, %s, %s, %s)",
            [dataset.pk, user.pk, roles.is_lead(user), role],
        )
        return bool(cursor.fetchone()[0])


pytestmark = pytest.mark.django_db


def _token_client(user: User) -> APIClient:
    """A client that signs in with the user's API token (the token's one-statement path)."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _group_names(user: User) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


def test_an_annotator_in_one_dataset_may_be_an_auditor_in_another() -> None:
    """In the dataset where she annotates she claims, drafts, skips and submits; in the one
    where she audits she rates audit items and gets 403 from the review claim and 404 from
    submitting a review there; the API token path and the session path agree."""
    person = UserFactory.create(role=ANNOTATOR)
    reviewed = review_dataset(2, k=1)
    audited, _judges = af.scoring_dataset(n_samples=20)
    open_queue(audited, k=1)
    audit_set = af.draw(audited, size=6, double_rating_fraction=0.0)
    services.dataset_add_member(dataset=reviewed, user=person, roles={ANNOTATOR})
    services.dataset_add_member(dataset=audited, user=person, roles={AUDITOR})
    assert _group_names(person) == {ANNOTATOR, AUDITOR}

    for client in (client_for(person), _token_client(person)):
        claim_here = client.post(reverse("api_review_claim", args=[reviewed.pk]), {}, format="json")
        assert claim_here.status_code == 200
        claim_there = client.post(reverse("api_review_claim", args=[audited.pk]), {}, format="json")
        assert claim_there.status_code == 403

    there = Sample.objects.filter(dataset=audited).first()
    assert there is not None
    review = {"client_uuid": str(uuid.uuid4()), "sample": there.pk, "decision": "accept"}
    api = client_for(person)
    assert api.post(reverse("api_reviews"), review, format="json").status_code == 404
    draft = reverse("api_review_draft", args=[there.pk])
    assert api.put(draft, {"payload": {}}, format="json").status_code == 404
    skip = reverse("api_review_skip", args=[there.pk])
    assert api.post(skip, {"reason": "no"}, format="json").status_code == 404

    browser = Client()
    browser.force_login(person)
    assert browser.post(reverse("review:next", args=[audited.pk])).status_code == 403
    assert browser.get(reverse("review:workbench", args=[there.pk])).status_code == 404
    queue = browser.get(reverse("review:queue", args=[audited.pk])).content.decode()
    assert 'id="start-review"' not in queue
    queue = browser.get(reverse("review:queue", args=[reviewed.pk])).content.decode()
    assert 'id="start-review"' in queue

    claimed = api.post(reverse("api_audit_claim", args=[audit_set.pk]))
    assert claimed.status_code == 200
    rating = {
        "item": claimed.json()["item"],
        "submission_uuid": str(uuid.uuid4()),
        **af.rubric_for("scoring"),
    }
    assert api.post(reverse("api_audit_ratings"), rating, format="json").status_code == 201
    assert browser.get(reverse("judging:audit_list", args=[audited.pk])).status_code == 200
    assert browser.get(reverse("judging:audit_list", args=[reviewed.pk])).status_code == 403


def test_changing_the_role_in_one_dataset_moves_the_work_at_once() -> None:
    """An annotator made auditor in a dataset can no longer claim there (the token's cached
    roles included), and the audit sets of another dataset stay out of reach."""
    person = UserFactory.create(role=ANNOTATOR)
    dataset, _judges = af.scoring_dataset(n_samples=20)
    open_queue(dataset, k=1, members=[person])
    audit_set = af.draw(dataset, size=4, double_rating_fraction=0.0)
    token = _token_client(person)
    claim = reverse("api_review_claim", args=[dataset.pk])
    assert token.post(claim, {}, format="json").status_code == 200
    assert token.post(reverse("api_audit_claim", args=[audit_set.pk])).status_code == 403
    services.dataset_member_set_roles(dataset=dataset, user=person, roles={AUDITOR})
    assert token.post(claim, {}, format="json").status_code == 403
    assert token.post(reverse("api_audit_claim", args=[audit_set.pk])).status_code == 200
    assert _group_names(person) == {AUDITOR}


def test_an_auditor_who_does_not_annotate_a_dataset_never_reviews_it() -> None:
    """The rule of the audit holds per dataset: a member whose membership holds only the
    auditor role gets no review slot there, whatever roles they hold elsewhere."""
    person = UserFactory.create(role=ANNOTATOR)
    elsewhere = review_dataset(1, k=1, members=[person])
    dataset = review_dataset(2, k=1)
    services.dataset_add_member(dataset=dataset, user=person, roles={AUDITOR})
    assert not _visible_by_sql(person, dataset, ANNOTATOR)
    assert selectors.dataset_get_visible(user=person, dataset_id=dataset.pk, role=ANNOTATOR) is None
    assert selectors.dataset_get_visible(user=person, dataset_id=elsewhere.pk, role=ANNOTATOR)
    response = client_for(person).post(
        reverse("api_review_claim", args=[dataset.pk]), {}, format="json"
    )
    assert response.status_code == 403
    assert not AuditItem.objects.exists()


def test_the_membership_services_refuse_bad_roles_and_keep_the_groups() -> None:
    """Unknown roles, no role at all, and changing someone who is no member are refused with
    a message; nothing changes."""
    person = UserFactory.create(role=ANNOTATOR)
    dataset = mmooc_dataset()
    with pytest.raises(ValidationError, match="not “lead”"):
        services.dataset_add_member(dataset=dataset, user=person, roles={roles.LEAD})
    with pytest.raises(ValidationError, match="not a member"):
        services.dataset_member_set_roles(dataset=dataset, user=person, roles={AUDITOR})
    services.dataset_add_member(dataset=dataset, user=person)
    with pytest.raises(ValidationError, match="at least one role"):
        services.dataset_member_set_roles(dataset=dataset, user=person, roles=set())
    membership = DatasetMembership.objects.get(dataset=dataset, user=person)
    assert (membership.annotates, membership.audits) == (True, False)
    assert _group_names(person) == {ANNOTATOR}


def test_the_members_page_changes_a_role_in_one_dataset(lead: Any) -> None:
    """The lead picks "Auditor" beside a member; that dataset's membership changes, another
    dataset's does not."""
    person = UserFactory.create(role=ANNOTATOR)
    first, second = mmooc_dataset(), mmooc_dataset()
    for dataset in (first, second):
        services.dataset_add_member(dataset=dataset, user=person)
    browser = Client()
    browser.force_login(lead)
    url = reverse("annotation:dataset_member_roles", args=[first.pk, person.pk])
    page = browser.post(url, {"role": AUDITOR}, follow=True)
    assert "role in this dataset was changed" in page.content.decode().replace("&#x27;", "'")
    assert DatasetMembership.objects.get(dataset=first, user=person).audits
    assert not DatasetMembership.objects.get(dataset=first, user=person).annotates
    assert DatasetMembership.objects.get(dataset=second, user=person).annotates
    assert _group_names(person) == {ANNOTATOR, AUDITOR}
    wrong = browser.post(url, {"role": "lead"}, follow=True).content.decode()
    assert "Choose annotator, auditor or both." in wrong


ROLE_SETS = st.sampled_from(
    [frozenset({ANNOTATOR}), frozenset({AUDITOR}), frozenset({ANNOTATOR, AUDITOR})]
)


class MembershipMachine(RuleBasedStateMachine):
    """Random additions, role changes and removals of members over three people and three
    datasets; after each step both membership tests, and the sample read that the review
    submission's lock calls, agree with the memberships, and each person's role groups are the
    roles they hold in their datasets."""

    @initialize()
    def setup(self) -> None:
        self.people = [UserFactory.create(role=r) for r in (ANNOTATOR, AUDITOR, ANNOTATOR)]
        self.datasets = [mmooc_dataset() for _ in range(3)]
        self.samples = [mmooc_sample(dataset) for dataset in self.datasets]
        self.held: dict[tuple[int, int], frozenset[str]] = {}

    @rule(person=st.integers(0, 2), dataset=st.integers(0, 2), wanted=ROLE_SETS)
    def add(self, person: int, dataset: int, wanted: frozenset[str]) -> None:
        services.dataset_add_member(
            dataset=self.datasets[dataset], user=self.people[person], roles=wanted
        )
        self.held[(person, dataset)] = wanted

    @rule(person=st.integers(0, 2), dataset=st.integers(0, 2))
    def add_with_site_roles(self, person: int, dataset: int) -> None:
        user = self.people[person]
        site = frozenset(_group_names(user)) & {ANNOTATOR, AUDITOR}
        services.dataset_add_member(dataset=self.datasets[dataset], user=user)
        self.held.setdefault((person, dataset), site)

    @rule(person=st.integers(0, 2), dataset=st.integers(0, 2), wanted=ROLE_SETS)
    def change(self, person: int, dataset: int, wanted: frozenset[str]) -> None:
        if (person, dataset) not in self.held:
            return
        services.dataset_member_set_roles(
            dataset=self.datasets[dataset], user=self.people[person], roles=wanted
        )
        self.held[(person, dataset)] = wanted

    @rule(person=st.integers(0, 2), dataset=st.integers(0, 2))
    def remove(self, person: int, dataset: int) -> None:
        services.dataset_remove_member(dataset=self.datasets[dataset], user=self.people[person])
        self.held.pop((person, dataset), None)

    @invariant()
    def both_tests_agree_with_the_memberships(self) -> None:
        if not hasattr(self, "people"):  # before the set-up
            return
        for p, stored in enumerate(self.people):
            person = User.objects.get(pk=stored.pk)  # fresh roles, as a new request reads them
            for d, dataset in enumerate(self.datasets):
                held = self.held.get((p, d))
                for role in (None, ANNOTATOR, AUDITOR):
                    expected = held is not None and (role is None or role in held)
                    sql = _visible_by_sql(person, dataset, role)
                    orm = selectors.dataset_get_visible(
                        user=person, dataset_id=dataset.pk, role=role
                    )
                    sample = selectors.sample_get_visible(
                        user=person, sample_id=self.samples[d].pk, with_media=False, role=role
                    )
                    assert sql == expected, (p, d, role)
                    assert (orm is not None) == expected, (p, d, role)
                    assert (sample is not None) == expected, (p, d, role)

    @invariant()
    def site_roles_are_the_roles_held(self) -> None:
        if not hasattr(self, "people"):  # before the set-up
            return
        for p, person in enumerate(self.people):
            mine = [roles_ for (q, _d), roles_ in self.held.items() if q == p]
            if mine:
                assert _group_names(person) & {ANNOTATOR, AUDITOR} == set().union(*mine)


def test_membership_tests_agree_with_the_memberships_after_any_changes() -> None:
    """The state machine above, over the real services and both membership tests."""
    run_state_machine_as_test(
        MembershipMachine,
        settings=settings(
            max_examples=15,
            stateful_step_count=12,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        ),
    )


def test_the_dataset_lists_show_each_member_the_work_of_their_role() -> None:
    """Dataset ids visible in a role are the memberships holding it, in one query each."""
    person = UserFactory.create(role=ANNOTATOR)
    one, two = mmooc_dataset(), mmooc_dataset()
    services.dataset_add_member(dataset=one, user=person, roles={ANNOTATOR})
    services.dataset_add_member(dataset=two, user=person, roles={AUDITOR})
    fresh = User.objects.get(pk=person.pk)
    ids = {
        role: set(
            selectors.dataset_list_visible(user=fresh, role=role).values_list("pk", flat=True)
        )
        for role in (ANNOTATOR, AUDITOR)
    }
    assert ids == {ANNOTATOR: {one.pk}, AUDITOR: {two.pk}}
    assert set(Dataset.objects.filter(memberships__user=fresh).values_list("pk", flat=True)) == {
        one.pk,
        two.pk,
    }
