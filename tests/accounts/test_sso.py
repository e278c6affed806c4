"""Single sign-on's rules (accounts/sso.py) without a provider: the group-to-role map, and
an invitation accepted only for an address the provider verified."""

from __future__ import annotations

from typing import Any

import pytest
from allauth.socialaccount.models import SocialAccount, SocialLogin
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.backends.db import SessionStore
from django.test import RequestFactory

from accounts import invitations, sso
from accounts.models import AccessEvent, AccessEventKind, Invitation
from core.roles import ANNOTATOR, AUDITOR, LEAD
from tests.annotation.factories import UserFactory, mmooc_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _mapping(settings: Any) -> None:
    settings.OIDC_GROUPS_CLAIM = "groups"
    settings.OIDC_GROUP_ROLES = {"ann": ANNOTATOR, "aud": AUDITOR, "both": "both", "boss": LEAD}


@pytest.mark.parametrize(
    ("groups", "roles"),
    [
        (["ann"], {ANNOTATOR}),
        (["both"], {ANNOTATOR, AUDITOR}),
        (["ann", "boss", "other"], {ANNOTATOR, LEAD}),
        ("aud", {AUDITOR}),
        (["marketing"], set()),
        ([], set()),
        (None, set()),
        ([{"nested": 1}, 7], set()),
    ],
)
def test_the_providers_groups_map_to_roles(groups: Any, roles: set[str]) -> None:
    """Only mapped group names give roles; odd claim shapes give none and never fail."""
    assert sso.mapped_roles({"groups": groups})[0] == frozenset(roles)


def _request() -> Any:
    request = RequestFactory().get("/sso/oidc/sso/login/callback/")
    request.session = SessionStore()
    request._messages = FallbackStorage(request)  # type: ignore[attr-defined]
    return request


def _login(claims: dict[str, Any]) -> SocialLogin:
    return SocialLogin(
        account=SocialAccount(provider="sso", uid="x", extra_data={"userinfo": claims})
    )


@pytest.mark.parametrize("verified", [True, False])
def test_a_pending_invitation_is_accepted_only_for_a_verified_address(
    lead: Any, verified: bool
) -> None:
    dataset = mmooc_dataset()
    invitations.invitations_create(
        emails=["ada@example.org"], role=AUDITOR, datasets=[dataset], actor=lead
    )
    person = UserFactory.create(email="ada@example.org")
    claims = {"email": "ada@example.org", "email_verified": verified, "groups": ["marketing"]}
    sso.sso_signed_in(_request(), person, _login(claims))
    accepted = Invitation.objects.get().accepted_by_id == person.pk
    assert accepted is verified
    assert person.memberships.filter(dataset=dataset, audits=True).exists() is verified
    line = AccessEvent.objects.get(kind=AccessEventKind.SIGNED_IN)
    assert line.detail["groups"] == ["marketing"] and line.detail["roles"] == []


def test_mapped_roles_are_added_and_none_taken_away() -> None:
    person = UserFactory.create(role=AUDITOR)
    sso.sso_signed_in(_request(), person, _login({"groups": ["ann"]}))
    assert set(person.groups.values_list("name", flat=True)) == {ANNOTATOR, AUDITOR}
    sso.sso_signed_in(_request(), person, _login({"groups": []}))
    assert set(person.groups.values_list("name", flat=True)) == {ANNOTATOR, AUDITOR}
