"""The auditor's next item before it is asked for: a short reservation of the rating slot their
next claim would take, made while they rate the current item, taken as their lease once the
current rating is in, or given back when unused (the review workbench's way, ``review.queue.
ahead``, with the audit queue's slots).

A reservation is a slot with no auditor and a lease expiry ``AHEAD_SECONDS`` ahead: no claim
takes it meanwhile (claims take slots whose lease expired), and it goes back to the queue by
itself when it expires, or at once when released. An auditor holds one lease per audit set
(``uniq_audit_open_lease``), so the reservation cannot be theirs until that lease is done;
what ties it to them is a signed token naming the slot and the expiry it set, so only they can
take, renew or release it, and a slot reserved again by someone else after it expired matches
no longer.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core import signing
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.leases import OPEN_SINCE, lease_expiry
from judging.audit import statements
from judging.models import AuditLease, AuditSet

if TYPE_CHECKING:
    from django.contrib.auth.models import User

AHEAD_SECONDS = 120
_SALT = "judging.audit.ahead"


@dataclass(frozen=True)
class Reservation:
    lease_id: int
    item_id: int
    audit_set_id: int
    auditor_id: int
    until: dt.datetime

    @property
    def token(self) -> str:
        return signing.dumps(
            [self.lease_id, self.item_id, self.audit_set_id, self.auditor_id,
             self.until.isoformat()],
            salt=_SALT,
        )  # fmt: skip


def reservation_read(*, token: str, auditor: User) -> Reservation:
    """The reservation a token names, if it was made for this auditor; ValidationError else."""
    try:
        lease_id, item_id, audit_set_id, auditor_id, until = signing.loads(token, salt=_SALT)
        reservation = Reservation(
            int(lease_id), int(item_id), int(audit_set_id), int(auditor_id),
            dt.datetime.fromisoformat(until),
        )  # fmt: skip
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise ValidationError(_("This reservation is not valid."), code="bad_token") from exc
    if reservation.auditor_id != auditor.pk:
        raise ValidationError(_("This reservation is not valid."), code="bad_token")
    return reservation


def _held(reservation: Reservation) -> Any:
    """The reserved slot, as long as the reservation is still the one the token set."""
    return AuditLease.objects.filter(
        pk=reservation.lease_id,
        audit_set_id=reservation.audit_set_id,
        auditor__isnull=True,
        done=False,
        lease_expires_at=reservation.until,
    )


def audit_reserve_ahead(
    *,
    audit_set: AuditSet,
    auditor: User,
    previous: Reservation | None = None,
    now: dt.datetime | None = None,
) -> Reservation | None:
    """Reserve the slot this auditor's next claim would take, for ``AHEAD_SECONDS``; the
    ``previous`` reservation, when still theirs, is renewed instead. None when nothing is left.

    Never an item they hold or rated (a double-rated item's second slot included)."""
    now = now or timezone.now()
    until = now + dt.timedelta(seconds=AHEAD_SECONDS)
    if (
        previous is not None
        and previous.audit_set_id == audit_set.pk
        and _held(previous).update(lease_expires_at=until)
    ):
        return Reservation(previous.lease_id, previous.item_id, audit_set.pk, auditor.pk, until)
    params: dict[str, Any] = {
        "audit_set": audit_set.pk,
        "me": auditor.pk,
        "now": now,
        "until": until,
    }
    with connection.cursor() as cursor:  # one statement: atomic on its own
        cursor.execute(statements.RESERVE, params)
        row = cursor.fetchone()
    if row is None:
        return None
    return Reservation(int(row[0]), int(row[1]), audit_set.pk, auditor.pk, until)


def audit_take_reserved(
    *, reservation: Reservation, auditor: User, lease_seconds: int, now: dt.datetime | None = None
) -> dt.datetime | None:
    """Make the reservation the auditor's lease (of the audit set's lease length); its expiry,
    or None when the reservation is gone (taken by someone else after it expired) or the
    auditor still holds another lease in the audit set (their current rating is not in)."""
    now = now or timezone.now()
    expires = lease_expiry(now, lease_seconds)
    try:
        with transaction.atomic():
            taken = _held(reservation).update(
                auditor=auditor, leased_at=now, lease_expires_at=expires
            )
    except IntegrityError:
        return None  # another open lease of theirs in the audit set
    return expires if taken else None


def audit_release_reserved(*, reservation: Reservation) -> bool:
    """Give an unused reservation back to the queue at once; True when it was still there."""
    return bool(_held(reservation).update(lease_expires_at=OPEN_SINCE))
