"""Single sign-on through a real OpenID Connect provider (oidc-provider under Node, on
loopback), in Chromium.

A person whose provider group maps to "annotator" and who was invited signs in from the
login page and lands on the review work of the invitation's dataset; one whose group maps
to nothing lands on a page that says access must be granted; a provider that answers with
an error, and a deactivated person, are refused with a message and a line in the log.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from accounts import invitations, people
from accounts.models import AccessEvent, AccessEventKind
from core.roles import ANNOTATOR, LEAD
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset
from tests.support.browser import chromium
from tests.support.identity_provider import IdentityProvider, identity_provider

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.node, pytest.mark.django_db(transaction=True)]

ACCOUNTS = {
    "ada": {"email": "ada@example.org", "name": "Ada Lovelace", "groups": ["studio-annotators"]},
    "nell": {"email": "nell@example.org", "name": "Nell Noaccess", "groups": ["marketing"]},
}


@pytest.fixture
def provider(live_server: Any, settings: Any, tmp_path: Any) -> Iterator[IdentityProvider]:
    callback = f"{live_server.url}/sso/oidc/sso/login/callback/"
    with identity_provider(
        redirect_uris=[callback], accounts=ACCOUNTS, log=tmp_path / "oidc.log"
    ) as idp:
        settings.OIDC_ISSUER = idp.issuer
        policy = settings.CONTENT_SECURITY_POLICY
        directives = {**policy["DIRECTIVES"], "form-action": ["'self'", idp.issuer]}
        settings.CONTENT_SECURITY_POLICY = {**policy, "DIRECTIVES": directives}
        settings.OIDC_PROVIDER_NAME = "Test IdP"
        settings.OIDC_GROUP_ROLES = {"studio-annotators": ANNOTATOR}
        settings.SOCIALACCOUNT_PROVIDERS = {
            "openid_connect": {
                "SCOPE": ["openid", "profile", "email", "groups"],
                "OAUTH_PKCE_ENABLED": True,
                "APPS": [
                    {
                        "provider_id": "sso",
                        "name": "Test IdP",
                        "client_id": idp.client_id,
                        "secret": idp.client_secret,
                        "settings": {"server_url": idp.issuer},
                    }
                ],
            }
        }
        yield idp


def _through_the_provider(page: Any, base: str, account: str) -> None:
    page.goto(f"{base}/login/")
    page.click("#sso-button")
    page.wait_for_selector("#idp-login")
    page.fill("#idp-login", account)
    page.click("#idp-submit")
    page.wait_for_url(lambda url: url.startswith(base) and "/sso/" not in url)


def test_single_sign_on_gives_the_mapped_role_or_no_access(
    live_server: Any, provider: IdentityProvider
) -> None:
    lead = UserFactory.create(role=LEAD)
    dataset = review_dataset(2, k=1)
    invitations.invitations_create(
        emails=["ada@example.org"], role=ANNOTATOR, datasets=[dataset], actor=lead
    )
    base = live_server.url
    with chromium() as browser:
        ada = browser.new_context().new_page()
        _through_the_provider(ada, base, "ada")
        assert ada.url == f"{base}/review/datasets/{dataset.pk}/"  # the review work
        ada.click("#start-review")
        ada.wait_for_url("**/review/samples/*/")
        person = get_user_model().objects.get(email="ada@example.org")
        assert set(person.groups.values_list("name", flat=True)) == {ANNOTATOR}
        assert not person.has_usable_password()

        nell = browser.new_context().new_page()
        _through_the_provider(nell, base, "nell")
        assert nell.url == f"{base}/welcome/"
        assert "access must be granted" in nell.inner_text("main")
        nobody = get_user_model().objects.get(email="nell@example.org")
        assert not people.has_access(nobody)

        refused = browser.new_context().new_page()
        refused.goto(f"{base}/login/")
        refused.click("#sso-button")
        refused.click("#idp-refuse")
        refused.wait_for_url(f"{base}/login/")
        assert "The identity provider refused the sign-in" in refused.inner_text(".messages")
        assert "refused to share their identity" in refused.inner_text(".messages")

        people.person_deactivate(person=person, actor=lead)
        again = browser.new_context().new_page()
        _through_the_provider(again, base, "ada")
        assert again.url == f"{base}/login/"
        assert "deactivated" in again.inner_text(".messages")
        assert again.locator("#nav-people").count() == 0

    kinds = list(AccessEvent.objects.values_list("kind", "detail"))
    signed = [d for k, d in kinds if k == AccessEventKind.SIGNED_IN]
    assert {d["method"] for d in signed} == {"single sign-on"}
    assert any(d["groups"] == ["marketing"] and d["roles"] == [] for d in signed)
    reasons = [d.get("reason") or d.get("error") for k, d in kinds if k == "sso_refused"]
    assert "deactivated" in reasons and len(reasons) == 2
