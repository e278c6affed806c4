"""Signing in (accounts/sign_in_views.py, sign_in.py, second_factor.py, backends.py): the
second factor with TOTP and recovery codes, its requirement for leads, the lockout that a
wrong code counts toward, password change and reset."""

from __future__ import annotations

import re
from typing import Any

import pyotp
import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts import second_factor
from accounts.models import AccessEvent, AccessEventKind
from core.roles import LEAD
from tests.annotation.factories import UserFactory

pytestmark = pytest.mark.django_db
PASSWORD = "pw-for-tests-1"


@pytest.fixture(autouse=True)
def _no_code_throttle(settings: Any) -> None:
    """django-otp's own waits after a wrong code (1 s, 2 s, …) are tested on their own."""
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    settings.OTP_STATIC_THROTTLE_FACTOR = 0


def _password_step(client: Client, user: Any, password: str = PASSWORD) -> Any:
    return client.post(reverse("login"), {"username": user.username, "password": password})


def _turn_on(user: Any) -> tuple[pyotp.TOTP, list[str]]:
    """Set the second factor up as the page does: read the secret, confirm a code."""
    client = Client()
    client.force_login(user)
    page = client.get(reverse("accounts:second_factor_enable")).content.decode()
    secret = re.search(r'id="totp-secret">(\w+)<', page)
    assert secret, page
    totp = pyotp.TOTP(secret.group(1))
    done = client.post(reverse("accounts:second_factor_enable"), {"code": totp.now()})
    codes = re.findall(r"<code>(\w+)</code>", done.content.decode())
    assert len(codes) == second_factor.RECOVERY_CODES
    return totp, codes


def _next_code(totp: pyotp.TOTP) -> str:
    """A code the device accepts after the one just used (the next time step's)."""
    import time

    return totp.at(time.time() + totp.interval)


def test_a_second_factor_asks_for_a_code_after_the_password(annotator: Any) -> None:
    """Password alone does not sign in; the TOTP code does, and the session is new."""
    totp, _codes = _turn_on(annotator)
    client = Client()
    step = _password_step(client, annotator)
    assert step["Location"] == reverse("accounts:second_factor")
    assert client.get(reverse("annotation:dataset_list")).status_code == 302
    done = client.post(reverse("accounts:second_factor"), {"code": _next_code(totp)})
    assert done.status_code == 302
    assert client.get(reverse("annotation:dataset_list")).status_code == 200
    methods = [
        e.detail.get("method")
        for e in AccessEvent.objects.filter(kind=AccessEventKind.SIGNED_IN, subject=annotator)
    ]
    assert "second factor" in methods


def test_a_recovery_code_signs_in_once(annotator: Any) -> None:
    """Each recovery code works once, and the page says how many are left."""
    _totp, codes = _turn_on(annotator)
    first = Client()
    _password_step(first, annotator)
    done = first.post(reverse("accounts:second_factor"), {"code": codes[0]}, follow=True)
    assert "9 are left" in done.content.decode()
    again = Client()
    _password_step(again, annotator)
    refused = again.post(reverse("accounts:second_factor"), {"code": codes[0]})
    assert refused.status_code == 400
    assert "That code is not right." in refused.content.decode()
    assert AccessEvent.objects.filter(kind=AccessEventKind.RECOVERY_CODE_USED).count() == 1


def test_wrong_codes_count_toward_the_lockout(annotator: Any, settings: Any) -> None:
    """Wrong TOTP codes are failed sign-ins for django-axes: after the limit even the right
    code gets the lockout page (429), and the log holds the failures and the lockout."""
    settings.AXES_FAILURE_LIMIT = 3
    totp, _codes = _turn_on(annotator)
    client = Client()
    _password_step(client, annotator)
    for _ in range(2):
        wrong = client.post(reverse("accounts:second_factor"), {"code": "000000"})
        assert wrong.status_code == 400
    locked = client.post(reverse("accounts:second_factor"), {"code": "000001"})
    assert locked.status_code == 429
    right = client.post(reverse("accounts:second_factor"), {"code": _next_code(totp)})
    assert right.status_code == 429
    assert "Too many failed logins" in right.content.decode()
    assert client.get(reverse("annotation:dataset_list")).status_code == 302
    failures = AccessEvent.objects.filter(kind=AccessEventKind.SIGN_IN_FAILED, subject=annotator)
    assert {e.detail.get("step") for e in failures} == {"second factor"}
    assert AccessEvent.objects.filter(kind=AccessEventKind.LOCKED_OUT, subject=annotator).exists()


def test_django_otp_makes_a_guesser_wait_after_a_wrong_code(annotator: Any, settings: Any) -> None:
    """With its throttle on, the code right after a wrong one is refused with the wait."""
    settings.OTP_TOTP_THROTTLE_FACTOR = 30
    totp, _codes = _turn_on(annotator)
    client = Client()
    _password_step(client, annotator)
    client.post(reverse("accounts:second_factor"), {"code": "000000"})
    page = client.post(reverse("accounts:second_factor"), {"code": _next_code(totp)})
    assert page.status_code == 400
    assert "Wait" in page.content.decode()


def test_a_site_that_requires_it_makes_a_lead_set_up_a_second_factor(settings: Any) -> None:
    """REQUIRE_LEAD_2FA: a lead's password leads to the set-up page, not to a session; the
    right code signs in and shows the recovery codes; next time the code is asked."""
    settings.REQUIRE_LEAD_2FA = True
    lead = UserFactory.create(role=LEAD)
    client = Client()
    step = _password_step(client, lead)
    assert step["Location"] == reverse("accounts:second_factor_set_up")
    assert client.get(reverse("annotation:dataset_list")).status_code == 302
    page = client.get(reverse("accounts:second_factor_set_up")).content.decode()
    secret = re.search(r'id="totp-secret">(\w+)<', page)
    assert secret and "asks leads for a second factor" in page
    totp = pyotp.TOTP(secret.group(1))
    wrong = client.post(reverse("accounts:second_factor_set_up"), {"code": "123456"})
    assert wrong.status_code == 400
    done = client.post(reverse("accounts:second_factor_set_up"), {"code": totp.now()})
    assert len(re.findall(r"<code>(\w+)</code>", done.content.decode())) == 10
    assert client.get(reverse("annotation:dataset_list")).status_code == 200
    later = Client()
    assert _password_step(later, lead)["Location"] == reverse("accounts:second_factor")
    security = client.get(reverse("accounts:security")).content.decode()
    assert "requires leads to keep a second factor" in security
    refused = client.post(reverse("accounts:second_factor_off"), {"password": PASSWORD})
    assert refused.status_code == 302
    assert second_factor.has_second_factor(lead)


def test_turning_the_second_factor_off_needs_the_password(annotator: Any) -> None:
    _turn_on(annotator)
    client = Client()
    client.force_login(annotator)
    client.post(reverse("accounts:second_factor_off"), {"password": "wrong"})
    assert second_factor.has_second_factor(annotator)
    client.post(reverse("accounts:second_factor_off"), {"password": PASSWORD})
    assert not second_factor.has_second_factor(annotator)
    assert _password_step(Client(), annotator).status_code == 302


def test_an_interrupted_second_step_starts_over(annotator: Any) -> None:
    """Without a password step first, the code page sends back to the login."""
    response = Client().post(reverse("accounts:second_factor"), {"code": "123456"})
    assert response.status_code == 302 and response["Location"] == reverse("login")


def test_a_password_change_checks_the_current_one_as_a_sign_in(
    annotator: Any, settings: Any
) -> None:
    """A wrong current password is refused and counted toward the lockout; the right one
    changes it and the new one signs in."""
    settings.AXES_FAILURE_LIMIT = 2
    client = Client()
    client.force_login(annotator)
    url = reverse("accounts:password_change")
    form = {"new_password1": "a-new-pass-22", "new_password2": "a-new-pass-22"}
    wrong = client.post(url, {"old_password": "nope", **form})
    assert wrong.status_code == 200
    assert "incorrectly" in wrong.content.decode()
    assert AccessEvent.objects.filter(
        kind=AccessEventKind.SIGN_IN_FAILED, subject=annotator, detail__step="password change"
    ).exists()
    done = client.post(url, {"old_password": PASSWORD, **form})
    assert done.status_code == 302
    assert _password_step(Client(), annotator, "a-new-pass-22").status_code == 302


def test_a_password_reset_mails_a_link_that_sets_a_new_password() -> None:
    """Django's reset: the mail's link opens the form once; the new password signs in."""
    person = UserFactory.create(email="pat@example.org")
    client = Client()
    sent = client.post(reverse("accounts:password_reset"), {"email": "pat@example.org"})
    assert sent["Location"] == reverse("accounts:password_reset_done")
    assert len(mail.outbox) == 1
    link = re.search(r"http://testserver(/password-reset/\S+/)", str(mail.outbox[0].body))
    assert link, mail.outbox[0].body
    form = client.get(link.group(1), follow=True)
    assert form.status_code == 200
    url = form.redirect_chain[-1][0] if form.redirect_chain else link.group(1)
    done = client.post(url, {"new_password1": "a-new-pass-33", "new_password2": "a-new-pass-33"})
    assert done.status_code == 302
    assert _password_step(Client(), person, "a-new-pass-33").status_code == 302
    again = Client().get(link.group(1), follow=True).content.decode()
    assert "does not work any more" in again
    unknown = Client().post(reverse("accounts:password_reset"), {"email": "none@example.org"})
    assert unknown.status_code == 302 and len(mail.outbox) == 1


def test_every_failed_password_sign_in_is_in_the_log_with_the_name_tried() -> None:
    Client().post(reverse("login"), {"username": "ghost", "password": "x"})
    event = AccessEvent.objects.get(kind=AccessEventKind.SIGN_IN_FAILED)
    assert event.subject_name == "ghost" and event.subject is None
    assert event.detail == {"step": "password"}
    assert event.ip_address == "127.0.0.1"


def test_a_sign_in_lands_a_person_on_their_work() -> None:
    """Password sign-in of an annotator of one dataset opens its review queue."""
    from annotation import services
    from tests.annotation.factories import mmooc_dataset

    person = UserFactory.create(role="annotator")
    dataset = mmooc_dataset()
    services.dataset_add_member(dataset=dataset, user=person)
    response = _password_step(Client(), person)
    assert response["Location"] == reverse("review:queue", args=[dataset.pk])
    assert get_user_model().objects.get(pk=person.pk).last_login is not None
