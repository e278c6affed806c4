"""The optional second factor of a password sign-in: a TOTP authenticator app, and ten
single-use recovery codes for when the phone is gone (django-otp's TOTP and static devices).

Each verification goes through django-otp's device, which throttles wrong codes itself
(waits of 1, 2, 4, … seconds); the sign-in step also counts a wrong code as a failed sign-in
for django-axes (``accounts.backends``).
"""

from __future__ import annotations

import base64
import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

import segno
from django.db import transaction
from django.utils import timezone
from django_otp.models import Device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import access_log
from accounts.models import AccessEventKind

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.http import HttpRequest

RECOVERY_CODES = 10
_TOTP_NAME = "authenticator"
_RECOVERY_NAME = "recovery codes"


def has_second_factor(user: User) -> bool:
    return bool(TOTPDevice.objects.filter(user=user, confirmed=True).exists())


@dataclass(frozen=True)
class Enrolment:
    """What the set-up page shows: the secret to type into the app, and the same as a QR code."""

    device: TOTPDevice
    secret: str  # base32, as authenticator apps take it
    qr_svg: str  # a data: URI of the otpauth:// URL as an SVG QR code


def _enrolment(device: TOTPDevice) -> Enrolment:
    secret = base64.b32encode(device.bin_key).decode().rstrip("=")
    qr = segno.make(device.config_url, error="m").svg_data_uri(scale=5, border=2)
    return Enrolment(device=device, secret=secret, qr_svg=qr)


def totp_enrolment(*, user: User) -> Enrolment:
    """The user's TOTP device being set up (made on the first call, kept until confirmed)."""
    device = TOTPDevice.objects.filter(user=user, confirmed=False).order_by("-id").first()
    if device is None:
        device = TOTPDevice.objects.create(user=user, name=_TOTP_NAME, confirmed=False)
    return _enrolment(device)


def _recovery_codes_make(user: User) -> list[str]:
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name=_RECOVERY_NAME, confirmed=True)
    codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=code) for code in codes)
    return codes


@transaction.atomic
def totp_enrol_confirm(
    *, user: User, code: str, request: HttpRequest | None = None
) -> list[str] | None:
    """Confirm the device being set up with a code from the app: on a right code the second
    factor is on (any earlier device goes) and the new recovery codes are returned (shown
    once); None on a wrong code."""
    device = (
        TOTPDevice.objects.select_for_update()
        .filter(user=user, confirmed=False)
        .order_by("-id")
        .first()
    )
    if device is None or not device.verify_token(_digits(code)):
        return None
    TOTPDevice.objects.filter(user=user).exclude(pk=device.pk).delete()
    device.confirmed = True
    device.save(update_fields=["confirmed"])
    codes = _recovery_codes_make(user)
    access_log.access_event_record(
        kind=AccessEventKind.SECOND_FACTOR_ENABLED, actor=user, subject=user, request=request
    )
    return codes


def recovery_codes_renew(*, user: User) -> list[str]:
    """New recovery codes (the old ones stop working)."""
    return _recovery_codes_make(user)


def recovery_codes_left(*, user: User) -> int:
    return int(StaticToken.objects.filter(device__user=user, device__confirmed=True).count())


@transaction.atomic
def second_factor_remove(*, user: User, actor: User, request: HttpRequest | None = None) -> bool:
    """Turn the second factor off (by the person, or by a lead for someone who lost it)."""
    deleted = TOTPDevice.objects.filter(user=user).delete()[0]
    StaticDevice.objects.filter(user=user).delete()
    if deleted:
        access_log.access_event_record(
            kind=AccessEventKind.SECOND_FACTOR_DISABLED, actor=actor, subject=user, request=request
        )
    return bool(deleted)


def _digits(code: str) -> str:
    return "".join(code.split())


@dataclass(frozen=True)
class Verified:
    device: Device
    recovery: bool  # a recovery code was used (and is gone)


@transaction.atomic
def second_factor_verify(*, user: User, code: str) -> Verified | None:
    """The device that accepts ``code`` (a TOTP code, or an unused recovery code), or None."""
    code = _digits(code)
    if not code:
        return None
    totp = TOTPDevice.objects.select_for_update().filter(user=user, confirmed=True).first()
    if totp is not None and code.isdigit() and len(code) == totp.digits:
        return Verified(totp, recovery=False) if totp.verify_token(code) else None
    static = StaticDevice.objects.select_for_update().filter(user=user, confirmed=True).first()
    if static is not None and static.verify_token(code.lower()):
        return Verified(static, recovery=True)
    return None


def second_factor_wait(*, user: User) -> dt.timedelta | None:
    """How long the user must wait before their next code is tried (after wrong ones)."""
    waits = []
    for device in (
        *TOTPDevice.objects.filter(user=user, confirmed=True),
        *StaticDevice.objects.filter(user=user, confirmed=True),
    ):
        allowed, data = device.verify_is_allowed()
        if not allowed and data and data.get("locked_until"):
            waits.append(data["locked_until"] - timezone.now())
    return max(waits) if waits else None
