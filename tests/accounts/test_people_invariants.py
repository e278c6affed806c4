"""Rules about people that hold after any sequence of a lead's actions (a Hypothesis state
machine over the real services): the site always keeps an active lead; a person's member
roles are the roles they hold in their datasets; a deactivated person has no token and their
password signs nobody in; the access log only grows, by a line for each change made."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.exceptions import ValidationError
from django.test import RequestFactory
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

from accounts import people
from accounts.models import AccessEvent
from annotation.models import DatasetMembership
from core.roles import ANNOTATOR, AUDITOR, LEAD
from tests.annotation.factories import UserFactory, mmooc_dataset

pytestmark = pytest.mark.django_db

ROLE_CHOICES = st.sampled_from(people.SITE_ROLE_CHOICES)
MEMBER_ROLES = st.sampled_from([{ANNOTATOR}, {AUDITOR}, {ANNOTATOR, AUDITOR}])


class PeopleMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        self.leads = [UserFactory.create(role=LEAD)]
        self.people = [UserFactory.create(role=r) for r in (ANNOTATOR, AUDITOR, LEAD)]
        self.everyone = self.leads + self.people
        self.datasets = [mmooc_dataset() for _ in range(2)]
        self.lines = AccessEvent.objects.count()

    def _actor(self) -> Any:
        fresh = get_user_model().objects.filter(
            pk__in=[u.pk for u in self.everyone], is_active=True, groups__name=LEAD
        )
        return fresh.first()

    def _changed(self, did: bool) -> None:
        now = AccessEvent.objects.count()
        assert now >= self.lines
        if did:
            assert now > self.lines
        self.lines = now

    @rule(person=st.integers(0, 3), role=ROLE_CHOICES)
    def set_role(self, person: int, role: str) -> None:
        target = get_user_model().objects.get(pk=self.everyone[person].pk)
        before = set(target.groups.values_list("name", flat=True))
        try:
            after = people.person_set_role(person=target, role=role, actor=self._actor())
        except ValidationError:
            self._changed(False)
            return
        self._changed(set(after) != before)

    @rule(person=st.integers(0, 3), dataset=st.integers(0, 1), roles=MEMBER_ROLES)
    def add(self, person: int, dataset: int, roles: set[str]) -> None:
        target = get_user_model().objects.get(pk=self.everyone[person].pk)
        try:
            people.person_add_to_dataset(
                person=target, dataset=self.datasets[dataset], roles=roles, actor=self._actor()
            )
        except ValidationError:
            assert not target.is_active
        self._changed(False)

    @rule(person=st.integers(0, 3), dataset=st.integers(0, 1))
    def remove(self, person: int, dataset: int) -> None:
        target = get_user_model().objects.get(pk=self.everyone[person].pk)
        people.person_remove_from_dataset(
            person=target, dataset=self.datasets[dataset], actor=self._actor()
        )
        self._changed(False)

    @rule(person=st.integers(0, 3), active=st.booleans())
    def activation(self, person: int, active: bool) -> None:
        target = get_user_model().objects.get(pk=self.everyone[person].pk)
        actor = self._actor()
        was = target.is_active
        if target.is_active:  # a person who can sign in may have made a token
            Token.objects.get_or_create(user=target)
        try:
            if active:
                people.person_reactivate(person=target, actor=actor)
            else:
                people.person_deactivate(person=target, actor=actor)
        except ValidationError:
            self._changed(False)
            return
        self._changed(was != active)

    @invariant()
    def an_active_lead_remains(self) -> None:
        if hasattr(self, "everyone"):
            assert self._actor() is not None

    @invariant()
    def member_roles_are_the_roles_held(self) -> None:
        if not hasattr(self, "everyone"):
            return
        for user in self.everyone:
            rows = DatasetMembership.objects.filter(user=user).values_list("annotates", "audits")
            if not rows:
                continue
            held = {ANNOTATOR for a, _ in rows if a} | {AUDITOR for _, b in rows if b}
            names = set(user.groups.values_list("name", flat=True)) - {LEAD}
            assert names == held

    @invariant()
    def the_deactivated_cannot_sign_in(self) -> None:
        if not hasattr(self, "everyone"):
            return
        request = RequestFactory().post("/login/")
        for user in get_user_model().objects.filter(
            pk__in=[u.pk for u in self.everyone], is_active=False
        ):
            assert not Token.objects.filter(user=user).exists()
            signed = authenticate(request, username=user.username, password="pw-for-tests-1")
            assert signed is None


def test_people_rules_hold_after_any_actions(settings_axes_off: None) -> None:
    run_state_machine_as_test(
        PeopleMachine,
        settings=settings(
            max_examples=8,
            stateful_step_count=10,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        ),
    )


@pytest.fixture
def settings_axes_off(settings: Any) -> None:
    """The invariant's sign-in checks are not a brute force: django-axes stays out of it."""
    settings.AXES_ENABLED = False
