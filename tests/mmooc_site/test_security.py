"""Secure by default: HTTPS settings with DEBUG off, a clean `check --deploy`, login lockout
(django-axes) and API throttles."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import UserRateThrottle

from tests.annotation.factories import UserFactory
from tests.support.processes import run_python

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = {
    "PATH": os.environ.get("PATH", ""),
    "SECRET_KEY": "k" * 20 + "-production-like-secret-key-of-enough-length-" + "z" * 20,
    "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
    # The one setting production needs besides its secret: the database (never connected to).
    "DATABASE_URL": os.environ["DATABASE_URL"],
}


def _production(code: str) -> str:
    """Run Python with the production settings and nothing else in the environment."""
    result = run_python(code, PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_check_deploy_is_clean_with_debug_off_and_nothing_else_set() -> None:
    """`manage.py check --deploy` prints no warning on the production defaults."""
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=PRODUCTION_ENV,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_defaults_turn_on_every_https_protection() -> None:
    """HSTS, the SSL redirect, secure cookies and the proxy header are on without settings."""
    out = _production(
        "import django; django.setup(); from django.conf import settings as s;"
        "print(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE,"
        " s.SECURE_HSTS_SECONDS > 0, s.SECURE_PROXY_SSL_HEADER)"
    )
    assert out.split() == ["True", "True", "True", "True", "('HTTP_X_FORWARDED_PROTO',", "'https')"]


def test_each_https_protection_turns_off_with_its_own_variable() -> None:
    """SECURE_SSL_REDIRECT=0 and the others, named like Django's settings, turn each off."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings as s;"
            "print(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE,"
            " s.SECURE_HSTS_SECONDS)",
        ],
        cwd=ROOT,
        env={
            **PRODUCTION_ENV,
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "SECURE_HSTS_SECONDS": "0",
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout.split() == ["False", "False", "False", "0"], result.stderr


@pytest.mark.django_db
def test_wrong_passwords_lock_the_login_out_with_a_message(settings: Any) -> None:
    """After the failure limit, even the right password is refused with a 429 page saying
    why and how long to wait; another user is not affected."""
    settings.AXES_FAILURE_LIMIT = 3
    victim = UserFactory.create(username="victim")
    victim.set_password("right-password")
    victim.save()
    other = UserFactory.create(username="other")
    other.set_password("other-password")
    other.save()
    client = Client()
    for _ in range(3):
        client.post(reverse("login"), {"username": "victim", "password": "wrong"})
    locked = client.post(reverse("login"), {"username": "victim", "password": "right-password"})
    assert locked.status_code == 429
    page = locked.content.decode()
    assert "Too many failed logins" in page and "15 minutes" in page
    fine = Client().post(reverse("login"), {"username": "other", "password": "other-password"})
    assert fine.status_code == 302


@pytest.mark.django_db
def test_api_calls_beyond_the_rate_get_429(monkeypatch: pytest.MonkeyPatch, annotator: Any) -> None:
    """A signed-in caller past the rate is throttled (DRF throttles on the shared cache);
    anonymous callers are refused before any throttle, every API view needing a login."""
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "5/minute"})
    signed_in = APIClient()
    signed_in.force_authenticate(annotator)
    codes = [signed_in.get(reverse("api_me")).status_code for _ in range(7)]
    assert codes[:5] == [200] * 5 and codes[5:] == [429, 429]
