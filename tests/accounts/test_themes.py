"""The theme switch (accounts/themes.py, the theme view, services): a browser's choice kept in
a cookie and drawn by the server as <html data-theme>, a signed-in user's kept for every
browser they sign in from."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts import services
from accounts.themes import THEME_COOKIE_NAME
from tests.support.html import element

pytestmark = pytest.mark.django_db


def _html_theme(client: Client, url: str) -> str | None:
    page = client.get(url)
    assert page.status_code == 200
    return dict(element(page.content.decode(), "html").attributes).get("data-theme")


def test_a_signed_in_users_theme_is_kept_and_restored_at_the_next_login(annotator: Any) -> None:
    """Dark chosen in one browser: that browser draws it at once, and a new browser draws it
    from the login on."""
    browser = Client()
    browser.force_login(annotator)
    assert _html_theme(browser, "/datasets/") is None
    response = browser.post(reverse("accounts:theme"), {"theme": "dark", "next": "/datasets/"})
    assert response.status_code == 302 and response["Location"] == "/datasets/"
    assert response.cookies[THEME_COOKIE_NAME].value == "dark"
    assert _html_theme(browser, "/datasets/") == "dark"
    assert services.user_theme(user=annotator) == "dark"

    fresh = Client()
    login = fresh.post("/login/", {"username": annotator.username, "password": "pw-for-tests-1"})
    assert login.cookies[THEME_COOKIE_NAME].value == "dark"
    assert _html_theme(fresh, "/datasets/") == "dark"


def test_following_the_system_drops_the_cookie_and_the_attribute(annotator: Any) -> None:
    """Back to the system's choice: no data-theme, so prefers-color-scheme decides."""
    browser = Client()
    browser.force_login(annotator)
    browser.post(reverse("accounts:theme"), {"theme": "light", "next": "/datasets/"})
    assert _html_theme(browser, "/datasets/") == "light"
    response = browser.post(reverse("accounts:theme"), {"theme": "", "next": "/datasets/"})
    assert response.cookies[THEME_COOKIE_NAME].value == ""
    assert _html_theme(browser, "/datasets/") is None
    assert services.user_theme(user=annotator) == ""


def test_an_anonymous_visitor_keeps_a_theme_in_the_cookie_only() -> None:
    """The login page switches too, with nobody's preference to write."""
    client = Client()
    response = client.post(reverse("accounts:theme"), {"theme": "dark", "next": "/login/"})
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert _html_theme(client, "/login/") == "dark"


def test_an_unknown_theme_or_a_foreign_next_changes_nothing(annotator: Any) -> None:
    """A made-up theme is ignored, a cookie with one draws nothing, and "next" never leads off
    the site."""
    client = Client()
    client.force_login(annotator)
    response = client.post(
        reverse("accounts:theme"), {"theme": "neon", "next": "https://elsewhere.example/"}
    )
    assert response.status_code == 302 and response["Location"] == reverse("home")
    assert THEME_COOKIE_NAME not in response.cookies
    assert services.user_theme(user=annotator) == ""
    client.cookies[THEME_COOKIE_NAME] = "neon"
    assert _html_theme(client, "/datasets/") is None


def test_the_switch_needs_a_post() -> None:
    assert Client().get(reverse("accounts:theme")).status_code == 405
