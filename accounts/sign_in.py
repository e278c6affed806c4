"""The steps of signing in: a password sign-in that waits for its second factor, finishing a
sign-in, and where a person lands afterwards.

Between the password and the code the session holds only who is signing in (and until
when); the person is signed in, with a session of their own, once the second factor is in.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import django_otp
from django.conf import settings
from django.contrib import auth
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from accounts import access_log, people, second_factor
from accounts.models import AccessEventKind
from annotation import selectors as annotation_selectors
from core.roles import ANNOTATOR, AUDITOR, is_lead

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.http import HttpRequest
    from django_otp.models import Device

PENDING_KEY = "accounts_pending_sign_in"
PENDING_SECONDS = 600
VERIFY = "verify"
SET_UP = "set_up"


def second_step(user: User) -> str | None:
    """What a password sign-in of this person still needs: their code (``VERIFY``), setting
    up a second factor first (``SET_UP``: a lead, when the site requires it), or nothing."""
    if second_factor.has_second_factor(user):
        return VERIFY
    if settings.REQUIRE_LEAD_2FA and is_lead(user):
        return SET_UP
    return None


@dataclass(frozen=True)
class Pending:
    user: User
    backend: str
    next_url: str
    step: str


def pending_start(
    request: HttpRequest, *, user: User, backend: str, next_url: str, step: str
) -> None:
    """Remember, in a fresh session, who gave the right password (for ``PENDING_SECONDS``)."""
    request.session.cycle_key()
    request.session[PENDING_KEY] = {
        "user": user.pk,
        "backend": backend,
        "next": next_url,
        "step": step,
        "until": time.time() + PENDING_SECONDS,
    }


def pending_get(request: HttpRequest) -> Pending | None:
    data = request.session.get(PENDING_KEY)
    if not isinstance(data, dict) or data.get("until", 0) < time.time():
        return None
    user_id = data.get("user")
    if not isinstance(user_id, int):
        return None
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    if user is None:
        return None
    return Pending(user, str(data["backend"]), str(data.get("next", "")), str(data["step"]))


def pending_clear(request: HttpRequest) -> None:
    request.session.pop(PENDING_KEY, None)


def sign_in_complete(
    request: HttpRequest,
    *,
    user: User,
    backend: str,
    method: str,
    device: Device | None = None,
) -> None:
    """Sign the person in (a new session), noting the second factor that verified them, and
    write the sign-in to the access log (``method``: password, second factor, invitation)."""
    pending_clear(request)
    auth.login(request, user, backend=backend)
    if device is not None:
        django_otp.login(request, device)
    access_log.access_event_record(
        kind=AccessEventKind.SIGNED_IN,
        actor=user,
        subject=user,
        detail={"method": method},
        request=request,
    )


def safe_next(request: HttpRequest, url: str) -> str:
    """``url`` when it stays on this site, else ''."""
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return ""


def landing_url(user: User) -> str:
    """Where a person's work is: a lead's datasets; an annotator's review queue, or an
    auditor's audits, when they work in one dataset; the dataset list otherwise; a page that
    says access must be granted for someone with no role."""
    if is_lead(user):
        return reverse("annotation:dataset_list")
    if not people.has_access(user):
        return reverse("accounts:no_access")
    reviewed = list(
        annotation_selectors.dataset_list_visible(user=user, role=ANNOTATOR).values_list(
            "pk", flat=True
        )[:2]
    )
    audited = list(
        annotation_selectors.dataset_list_visible(user=user, role=AUDITOR).values_list(
            "pk", flat=True
        )[:2]
    )
    if len(reviewed) == 1 and not audited:
        return reverse("review:queue", args=[reviewed[0]])
    if len(audited) == 1 and not reviewed:
        return reverse("judging:audit_list", args=[audited[0]])
    return reverse("annotation:dataset_list")
