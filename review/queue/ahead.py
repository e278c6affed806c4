"""The next sample before it is asked for: a short reservation of the slot a reviewer's next
claim would take, made while they work on the current one, then taken as their lease once
their review is in, or given back when unused.

A reservation is a slot with no reviewer and a lease expiry ``AHEAD_SECONDS`` ahead: nobody's
claim takes it meanwhile (claims take slots whose lease expired), and it goes back to the queue
by itself when it expires, or at once when released. A reviewer holds one lease per dataset
(``uniq_open_lease``), so the reservation cannot be theirs until that lease is done; what ties
it to them is a signed token naming the slot and the expiry it set, so only they can take,
renew or release it, and a slot reserved again by someone else after it expired matches no
longer. A fresh "next" draw of a gold item (``review.gold.services``) happens here, at the
reservation, with the dataset's gold rate, so the workbench cannot tell a gold item apart by
how it arrives; an unused gold reservation is deleted.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core import signing
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Dataset
from core.leases import OPEN_SINCE
from review.gold import services as gold_services
from review.models import Slot
from review.queue import assignments, statements
from review.selectors import review_settings_get

if TYPE_CHECKING:
    from django.contrib.auth.models import User

AHEAD_SECONDS = 120
_SALT = "review.ahead"


@dataclass(frozen=True)
class Reservation:
    slot_id: int
    sample_id: int
    dataset_id: int
    reviewer_id: int
    until: dt.datetime
    gold: bool = False
    # One of the reviewer's assigned samples: taking it closes their assignment.
    assigned: bool = False

    @property
    def token(self) -> str:
        return signing.dumps(
            [self.slot_id, self.sample_id, self.dataset_id, self.reviewer_id,
             self.until.isoformat(), self.gold, self.assigned],
            salt=_SALT,
        )  # fmt: skip


def reservation_read(*, token: str, reviewer: User) -> Reservation:
    """The reservation a token names, if it was made for this reviewer; ValidationError else."""
    try:
        # A token made before assignments has no seventh field.
        slot_id, sample_id, dataset_id, reviewer_id, until, gold, *assigned = signing.loads(
            token, salt=_SALT
        )
        reservation = Reservation(
            int(slot_id), int(sample_id), int(dataset_id), int(reviewer_id),
            dt.datetime.fromisoformat(until), bool(gold), bool(assigned and assigned[0]),
        )  # fmt: skip
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise ValidationError(_("This reservation is not valid."), code="bad_token") from exc
    if reservation.reviewer_id != reviewer.pk:
        raise ValidationError(_("This reservation is not valid."), code="bad_token")
    return reservation


def _held(reservation: Reservation) -> Any:
    """The reserved slot, as long as the reservation is still the one the token set."""
    return Slot.objects.filter(
        pk=reservation.slot_id,
        dataset_id=reservation.dataset_id,
        reviewer__isnull=True,
        done=False,
        gold=reservation.gold,
        lease_expires_at=reservation.until,
    )


def slot_reserve_ahead(
    *,
    dataset: Dataset,
    reviewer: User,
    previous: Reservation | None = None,
    now: dt.datetime | None = None,
    rng: random.Random | None = None,
) -> Reservation | None:
    """Reserve the slot this reviewer's next claim would take, for ``AHEAD_SECONDS``; the
    ``previous`` reservation, when still theirs, is renewed instead. None when nothing is left.

    Never a sample they hold or reviewed in its round (those are their slots), nor a skipped
    one; with the dataset's gold rate, a gold item they were never served instead.
    """
    now = now or timezone.now()
    until = now + dt.timedelta(seconds=AHEAD_SECONDS)
    mine = previous is not None and previous.dataset_id == dataset.pk
    if mine and previous is not None and _held(previous).update(lease_expires_at=until):
        return Reservation(
            previous.slot_id,
            previous.sample_id,
            dataset.pk,
            reviewer.pk,
            until,
            previous.gold,
            previous.assigned,
        )
    gold = _reserve_gold(dataset=dataset, reviewer=reviewer, now=now, until=until, rng=rng)
    if gold is not None:
        return gold
    params: dict[str, Any] = {
        "dataset": dataset.pk,
        "me": reviewer.pk,
        "now": now,
        "until": until,
        "skipped": False,
        "sample": None,
    }
    with connection.cursor() as cursor:  # one statement: atomic on its own
        cursor.execute(statements.RESERVE, params)
        row = cursor.fetchone()
    if row is None:
        return None
    return Reservation(
        int(row[0]), int(row[1]), dataset.pk, reviewer.pk, until, assigned=bool(row[2])
    )


def _reserve_gold(
    *,
    dataset: Dataset,
    reviewer: User,
    now: dt.datetime,
    until: dt.datetime,
    rng: random.Random | None,
) -> Reservation | None:
    """A gold slot reserved for this reviewer, drawn with the dataset's gold rate as a fresh
    claim draws it; None (one query) when the dataset has no gold item."""
    if not gold_services.dataset_has_gold(dataset=dataset):
        return None
    # Gold reservations that expired unused go: nobody else could ever take them.
    Slot.objects.filter(
        dataset=dataset, gold=True, reviewer__isnull=True, lease_expires_at__lt=now
    ).delete()
    rate = review_settings_get(dataset=dataset).gold_rate
    draw = rng or gold_services.default_rng()
    if rate <= 0 or draw.random() >= rate:
        return None
    candidates = gold_services.gold_candidates(
        dataset_id=dataset.pk, reviewer=reviewer, besides=None
    )
    if not candidates:
        return None
    slot = Slot.objects.create(
        dataset=dataset,
        sample_id=draw.choice(candidates),
        round=0,
        position=0,
        lease_expires_at=until,
        gold=True,
    )
    return Reservation(slot.pk, slot.sample_id, dataset.pk, reviewer.pk, until, gold=True)


def slot_take_reserved(
    *, reservation: Reservation, reviewer: User, now: dt.datetime | None = None
) -> dt.datetime | None:
    """Make the reservation the reviewer's lease (of the dataset's lease length); its expiry,
    or None when the reservation is gone (taken by someone else after it expired) or the
    reviewer still holds another lease in the dataset."""
    now = now or timezone.now()
    dataset = Dataset(pk=reservation.dataset_id)
    expires = now + dt.timedelta(seconds=review_settings_get(dataset=dataset).lease_seconds)
    try:
        with transaction.atomic():
            taken = _held(reservation).update(
                reviewer=reviewer, leased_at=now, lease_expires_at=expires
            )
            if taken and reservation.assigned:
                assignments.assignment_served(slot_id=reservation.slot_id, reviewer=reviewer)
    except IntegrityError:
        return None  # another open lease of theirs in the dataset, or this sample's slot
    return expires if taken else None


def slot_release_reserved(*, reservation: Reservation) -> bool:
    """Give an unused reservation back to the queue at once (a gold one is deleted); True when
    it was still there."""
    held = _held(reservation)
    if reservation.gold:
        return bool(held.delete()[0])
    return bool(held.update(lease_expires_at=OPEN_SINCE))
