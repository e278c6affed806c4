"""A user's API token (accounts/views.py, services, selectors; core/authentication.py): made and
revoked on the token page, shown once, refused once expired."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def _page(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(key: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.get(reverse("api_me"))
    if response.status_code == 401:
        assert response["WWW-Authenticate"] == "Token"
    return response.status_code


def test_a_user_makes_a_token_sees_it_once_and_it_opens_the_api(annotator: Any) -> None:
    """The key is shown right after it is made, never again; it authenticates API calls."""
    client = _page(annotator)
    assert "You have no API token." in client.get(reverse("accounts:api_token")).content.decode()
    made = client.post(reverse("accounts:api_token"), {"action": "create"}).content.decode()
    key = Token.objects.get(user=annotator).key
    assert key in made
    assert key not in client.get(reverse("accounts:api_token")).content.decode()
    assert _api(key) == 200


def test_a_new_token_replaces_the_old_and_a_revoked_one_stops_working(annotator: Any) -> None:
    """Making a token again retires the previous key; revoking leaves the user with none."""
    client = _page(annotator)
    client.post(reverse("accounts:api_token"), {"action": "create"})
    first = Token.objects.get(user=annotator).key
    client.post(reverse("accounts:api_token"), {"action": "create"})
    second = Token.objects.get(user=annotator).key
    # A refused token gets 401 with the token challenge.
    assert first != second and _api(first) == 401 and _api(second) == 200
    response = client.post(reverse("accounts:api_token"), {"action": "revoke"})
    assert response.status_code == 302
    assert not Token.objects.filter(user=annotator).exists()
    assert _api(second) == 401


def test_an_expired_token_is_refused_with_a_reason(annotator: Any, settings: Any) -> None:
    """A token older than API_TOKEN_DAYS is refused saying it expired; the page says so too."""
    settings.API_TOKEN_DAYS = 30
    token = Token.objects.create(user=annotator)
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - dt.timedelta(days=31))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.get(reverse("api_me"))
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
    assert "expired" in response.json()["detail"]
    page = _page(annotator).get(reverse("accounts:api_token")).content.decode()
    assert "Your token expired on" in page


def test_an_unknown_token_and_no_credentials_get_401_with_the_token_challenge() -> None:
    """A key nobody holds, and a call with no credentials at all, get 401 and
    ``WWW-Authenticate: Token``: the convention clients use to know they must authenticate."""
    assert _api("0" * 40) == 401
    response = APIClient().get(reverse("api_me"))
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


def test_a_session_still_opens_the_api(annotator: Any) -> None:
    """Pages' scripts call the API with the session: token first does not refuse them."""
    client = APIClient()
    client.force_login(annotator)
    assert client.get(reverse("api_me")).status_code == 200


def test_the_token_page_needs_a_login() -> None:
    """Anonymous visitors are sent to the login page."""
    response = Client().get(reverse("accounts:api_token"))
    assert response.status_code == 302 and "/login/" in response["Location"]
