"""Writes of the calibration audit: claiming items and submitting ratings (drawing an audit
set is in ``drawing``, re-exported here).

Claiming is one statement (``judging.audit.statements.CLAIM``, with the lease rules of
``core.leases`` that the review queue keeps too): it renews the auditor's lease or locks the
next claimable slot with ``FOR UPDATE SKIP LOCKED`` and leases it, so concurrent auditors never
wait on each other nor take the same slot.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.leases import OPEN_SINCE, claim_retrying, claim_row
from judging.audit import computations, statements
from judging.audit.drawing import (  # drawing is re-exported: services is the entry point
    MAX_AUDIT_SIZE as MAX_AUDIT_SIZE,
)
from judging.audit.drawing import (
    MAX_OVERSAMPLING as MAX_OVERSAMPLING,
)
from judging.audit.drawing import (
    MAX_SEED as MAX_SEED,
)
from judging.audit.drawing import (
    AuditDesign as AuditDesign,
)
from judging.audit.drawing import (
    audit_design_check as audit_design_check,
)
from judging.audit.drawing import (
    audit_set_create as audit_set_create,
)
from judging.audit.drawing import (
    audit_set_draw as audit_set_draw,
)
from judging.audit.drawing import (
    audit_set_draw_run as audit_set_draw_run,
)
from judging.audit.drawing import (
    audit_set_retry as audit_set_retry,
)
from judging.audit.drawing import (
    audit_sets_sweep as audit_sets_sweep,
)
from judging.audit.rubric import RatingValues, rubric_check
from judging.models import (
    AuditItem,
    AuditLease,
    AuditRating,
    AuditSet,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

MAX_SECONDS = 24 * 3600.0


class AuditConflict(ValidationError):
    """The rating cannot be taken: already rated, or the item needs no more ratings."""


@dataclass(frozen=True)
class Lease:
    lease_id: int
    item_id: int
    slot: int
    expires_at: dt.datetime
    resumed: bool


def audit_claim(
    *, audit_set: AuditSet, auditor: User, now: dt.datetime | None = None
) -> Lease | None:
    """Lease the next item this auditor has not rated and that still needs a rating.

    An auditor holding an unfinished lease in the audit set gets it back (renewed), so a
    reload or a double click never takes a second item. None when nothing is left.
    """
    params = {
        "audit_set": audit_set.pk,
        "me": auditor.pk,
        "now": now or timezone.now(),
        "lease_seconds": audit_set.lease_seconds,
    }
    row = claim_retrying(lambda: claim_row(statements.CLAIM, params))
    if row is None:
        return None
    lease_id, expires_at, resumed, item_id, slot = row
    return Lease(lease_id, item_id, slot, expires_at, resumed=resumed)


def audit_release(*, audit_set: AuditSet, auditor: User) -> bool:
    """Give back the auditor's unfinished lease; True when there was one."""
    held = AuditLease.objects.filter(audit_set=audit_set, auditor=auditor, done=False)
    return held.update(auditor=None, leased_at=None, lease_expires_at=OPEN_SINCE) > 0


def audit_rubric_check(
    *,
    task: str,
    answer_score: object = None,
    reasoning_score: object = None,
    refused: object = None,
    safety_label: object = "",
) -> RatingValues:
    """The rating values a task's rubric asks for, checked; other values must be empty."""
    return rubric_check(
        task=task,
        values={
            "answer_score": answer_score,
            "reasoning_score": reasoning_score,
            "refused": refused,
            "safety_label": safety_label,
        },
    )


@dataclass(frozen=True)
class SubmitResult:
    rating: AuditRating
    created: bool


def audit_rating_submit(
    *,
    auditor: User,
    item: AuditItem,
    submission_uuid: uuid.UUID,
    answer_score: object = None,
    reasoning_score: object = None,
    refused: object = None,
    safety_label: object = "",
    note: str = "",
    seconds_spent: float = 0.0,
) -> SubmitResult:
    """Record an auditor's rating of an item they hold (or can still take) a slot of.

    The same ``submission_uuid`` returns the first rating instead of making a second one.
    """
    values = audit_rubric_check(
        task=item.audit_set.task,
        answer_score=answer_score,
        reasoning_score=reasoning_score,
        refused=refused,
        safety_label=safety_label,
    )
    if len(note) > 5000:
        raise ValidationError({"note": _("Keep the note under 5,000 characters.")})
    spent = float(seconds_spent) if math.isfinite(float(seconds_spent)) else 0.0
    seconds = min(max(spent, 0.0), MAX_SECONDS)
    with transaction.atomic():
        # Locking the item's slots serialises its submissions; a retry of the same submission
        # waits here, then finds the first one.
        slots = list(AuditLease.objects.select_for_update().filter(item=item).order_by("slot"))
        earlier = AuditRating.objects.filter(submission_uuid=submission_uuid).first()
        if earlier is not None:
            if earlier.auditor_id != auditor.pk or earlier.item_id != item.pk:
                raise AuditConflict(_("This submission id was already used."), code="uuid_reused")
            return SubmitResult(earlier, created=False)
        if any(s.auditor_id == auditor.pk and s.done for s in slots):
            raise AuditConflict(_("You already rated this item."), code="already_rated")
        now = timezone.now()
        slot = next((s for s in slots if s.auditor_id == auditor.pk and not s.done), None)
        if slot is None:
            # The lease expired or was never taken; the work is kept if a slot is still free.
            slot = next((s for s in slots if not s.done and s.lease_expires_at < now), None)
        if slot is None:
            raise AuditConflict(_("This item needs no more ratings."), code="no_slot")
        rating = AuditRating.objects.create(
            audit_set_id=item.audit_set_id,
            item=item,
            lease=slot,
            auditor=auditor,
            answer_score=values.answer_score,
            reasoning_score=values.reasoning_score,
            refused=values.refused,
            safety_label=values.safety_label,
            note=note.strip(),
            seconds_spent=seconds,
            submission_uuid=submission_uuid,
        )
        AuditLease.objects.filter(pk=slot.pk).update(done=True, auditor=auditor)
        computations.audit_statistics_request(audit_set=item.audit_set)
    return SubmitResult(rating, created=True)
