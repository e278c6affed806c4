"""The second factor in Chromium: a person turns it on from their security page, reading
the secret the page shows into a TOTP generator (pyotp here, an authenticator app for a
person), then signs in with a code, with a wrong code (refused, counted), and with a
recovery code."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pyotp
import pytest

from accounts.models import AccessEvent, AccessEventKind
from core.roles import ANNOTATOR
from tests.annotation.factories import UserFactory
from tests.support.browser import chromium_page, log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def _log_out(page: Any) -> None:
    page.click("header form[action$='/logout/'] button")
    page.wait_for_url("**/login/")


def _password(page: Any, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("form [type=submit]")
    page.wait_for_url("**/login/second-factor/")


def test_turn_on_the_second_factor_and_sign_in_with_a_code_then_a_recovery_code(
    live_server: Any, page: Any, settings: Any
) -> None:
    settings.OTP_TOTP_THROTTLE_FACTOR = 0  # django-otp's own waits are tested elsewhere
    person = UserFactory.create(role=ANNOTATOR)
    base = live_server.url
    log_in(page, base, person)
    page.click("#nav-security")
    assert "Off" in page.inner_text("#second-factor-state")
    page.click("#second-factor-on")
    assert page.locator("#totp-qr").evaluate("img => img.complete && img.naturalWidth > 0")
    totp = pyotp.TOTP(page.inner_text("#totp-secret").strip())
    page.fill("#second-factor-set-up input[name=code]", totp.now())
    page.click("#second-factor-set-up button[type=submit]")
    page.wait_for_selector("#recovery-codes")
    codes = [c.strip() for c in page.locator("#recovery-codes code").all_inner_texts()]
    assert len(codes) == 10
    page.click("#continue")
    assert "On:" in page.inner_text("#second-factor-state")
    _log_out(page)

    _password(page, base, person.username)
    page.fill("#second-factor-form input[name=code]", "000000")
    page.click("#second-factor-form button[type=submit]")
    assert "That code is not right." in page.inner_text("#second-factor-form")
    assert page.url.endswith("/login/second-factor/")
    next_code = totp.at(time.time() + totp.interval)  # a later step than the one used
    page.fill("#second-factor-form input[name=code]", next_code)
    page.click("#second-factor-form button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)
    assert page.locator("#nav-security").count() == 1
    _log_out(page)

    _password(page, base, person.username)
    page.fill("#second-factor-form input[name=code]", codes[0])
    page.click("#second-factor-form button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)
    assert "recovery code" in page.inner_text(".messages")
    _log_out(page)
    _password(page, base, person.username)
    page.fill("#second-factor-form input[name=code]", codes[0])  # used: refused
    page.click("#second-factor-form button[type=submit]")
    assert "That code is not right." in page.inner_text("#second-factor-form")

    failed = AccessEvent.objects.filter(kind=AccessEventKind.SIGN_IN_FAILED, subject=person)
    assert failed.count() == 2 and all(e.detail["step"] == "second factor" for e in failed)
    methods = set(
        AccessEvent.objects.filter(kind=AccessEventKind.SIGNED_IN, subject=person).values_list(
            "detail__method", flat=True
        )
    )
    assert {"second factor", "recovery code"} <= methods
