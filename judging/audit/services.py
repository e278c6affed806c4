"""Writes of the calibration audit: drawing an audit set, claiming items, submitting ratings.

Claiming locks one claimable slot with ``SELECT … FOR UPDATE SKIP LOCKED`` in the order of the
partial index ``audit_lease_claim_idx`` (first ratings before second ones, items in their drawn
order) and leases it, so concurrent auditors never wait on each other nor take the same slot.
On SQLite the row lock is a no-op and the single writer serialises claims instead.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Dataset, JobStatus
from core.tasks import enqueue
from judging.audit import selectors
from judging.audit.rubric import RatingValues, rubric_check
from judging.models import (
    AllocationMethod,
    AuditItem,
    AuditLease,
    AuditRating,
    AuditSet,
    AuditTask,
)
from judging.stats.sampling import AuditSample, draw_audit_sample, strata_sizes

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The lease expiry of a slot nobody holds: long past, so "claimable" is one comparison.
OPEN_SINCE = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
MAX_AUDIT_SIZE = 50_000
MAX_SEED = 2**63 - 1
MAX_SECONDS = 24 * 3600.0
MAX_OVERSAMPLING = 100.0
_CLAIM_ATTEMPTS = 3
_BATCH = 2000


class AuditConflict(ValidationError):
    """The rating cannot be taken: already rated, or the item needs no more ratings."""


@dataclass(frozen=True)
class AuditDesign:
    """The parameters of a draw, checked."""

    task: str
    size: int
    method: str
    floor: int
    oversample_rare: float
    oversample_disagree: float
    seed: int
    double_rating_fraction: float


def audit_design_check(
    *,
    task: str,
    size: int,
    method: str = AllocationMethod.PROPORTIONAL,
    floor: int = 0,
    oversample_rare: float = 1.0,
    oversample_disagree: float = 1.0,
    seed: int = 0,
    double_rating_fraction: float = 0.1,
) -> AuditDesign:
    """Validate a design; every problem is reported at once, by field."""
    errors: dict[str, str] = {}
    if task not in AuditTask.values:
        errors["task"] = _("Choose scoring, answerability or safety.")
    if not 1 <= size <= MAX_AUDIT_SIZE:
        errors["size"] = _("Between 1 and %(max)d items.") % {"max": MAX_AUDIT_SIZE}
    if method not in AllocationMethod.values:
        errors["method"] = _("Choose proportional, square-root or equal allocation.")
    if floor < 0 or floor > MAX_AUDIT_SIZE:
        errors["floor"] = _("The floor per stratum cannot be negative.")
    for name, value in (
        ("oversample_rare", oversample_rare),
        ("oversample_disagree", oversample_disagree),
    ):
        if not (math.isfinite(value) and 1.0 <= value <= MAX_OVERSAMPLING):
            errors[name] = _("An oversampling factor lies between 1 and %(max)d.") % {
                "max": int(MAX_OVERSAMPLING)
            }
    if not 0 <= seed <= MAX_SEED:
        errors["seed"] = _("The seed is a whole number from 0 to 2⁶³ − 1.")
    if not (math.isfinite(double_rating_fraction) and 0.0 <= double_rating_fraction <= 1.0):
        errors["double_rating_fraction"] = _("The share of items rated twice lies in [0, 1].")
    if errors:
        raise ValidationError(errors, code="bad_design")
    return AuditDesign(
        task,
        size,
        method,
        floor,
        oversample_rare,
        oversample_disagree,
        seed,
        double_rating_fraction,
    )


def _frame_summary(rows: list[selectors.FrameRow], drawn: AuditSample) -> dict[str, object]:
    items = [row.item for row in rows]
    return {
        "frame_size": len(items),
        "rare": sum(1 for item in items if item.rare),
        "disagree": sum(1 for item in items if item.disagree),
        "strata_sizes": strata_sizes(items),
        "allocation": drawn.allocation,
        "cells": {key: list(value) for key, value in drawn.cells.items()},
        "population_shares": {str(k): v for k, v in drawn.population_shares().items()},
    }


def _second_ratings(n_items: int, fraction: float, seed: int) -> set[int]:
    """Indices (into the drawn order) of the items rated twice, reproducibly from the seed."""
    import numpy as np

    count = min(n_items, round(fraction * n_items))
    rng = np.random.default_rng([seed, 2])
    return {int(i) for i in rng.choice(n_items, size=count, replace=False)}


@transaction.atomic
def audit_set_create(
    *,
    dataset: Dataset,
    name: str,
    task: str,
    size: int,
    method: str = AllocationMethod.PROPORTIONAL,
    floor: int = 0,
    oversample_rare: float = 1.0,
    oversample_disagree: float = 1.0,
    seed: int = 0,
    double_rating_fraction: float = 0.1,
    by: User | None = None,
    queue: bool = True,
) -> AuditSet:
    """Record an audit set's design and queue its draw for a worker (on commit).

    A bad design or a taken name is refused at once, with readable messages; the frame (every
    judged item of the dataset, possibly hundreds of thousands) is read by the worker.
    """
    design = audit_design_check(
        task=task,
        size=size,
        method=method,
        floor=floor,
        oversample_rare=oversample_rare,
        oversample_disagree=oversample_disagree,
        seed=seed,
        double_rating_fraction=double_rating_fraction,
    )
    name = name.strip()
    if not name or len(name) > 200:
        raise ValidationError({"name": _("Give the audit set a name (200 characters at most).")})
    if AuditSet.objects.filter(dataset=dataset, name=name).exists():
        raise ValidationError({"name": _("This dataset already has an audit set of that name.")})
    audit_set = AuditSet.objects.create(
        dataset=dataset,
        name=name,
        task=design.task,
        size=design.size,
        method=design.method,
        floor=design.floor,
        oversample_rare=design.oversample_rare,
        oversample_disagree=design.oversample_disagree,
        seed=design.seed,
        double_rating_fraction=design.double_rating_fraction,
        status=JobStatus.QUEUED,
        created_by=by,
    )
    if queue:
        transaction.on_commit(lambda: enqueue("judging.draw_audit_set", audit_set.pk))
    return audit_set


@transaction.atomic
def audit_set_draw_run(*, audit_set_id: int) -> AuditSet | None:
    """Draw a queued audit set: read the frame, sample it, store items and rating slots.

    The draw is :func:`judging.stats.sampling.draw_audit_sample` over the frame of
    :func:`selectors.audit_frame`; the same frame, design and seed give the same items in the
    same order. Items are put in a seeded random order, so that a half-finished audit is a
    random half; a seeded share of them gets a second rating slot. Safe to run twice: a set
    already drawn (or failed) is left as it is.
    """
    import numpy as np  # the draw runs in a worker; web processes import this module too

    audit_set = AuditSet.objects.select_for_update().filter(pk=audit_set_id).first()
    if audit_set is None or audit_set.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        return audit_set
    rows = selectors.audit_frame(dataset=audit_set.dataset, task=audit_set.task)
    if not rows:
        audit_set.status = JobStatus.FAILED
        audit_set.message = _("No judged items of this task yet: run the judges first.")
        audit_set.save(update_fields=["status", "message"])
        return audit_set
    drawn = draw_audit_sample(
        [row.item for row in rows],
        n=audit_set.size,
        method=audit_set.method,  # type: ignore[arg-type]
        floor=audit_set.floor,
        oversample_rare=audit_set.oversample_rare,
        oversample_disagree=audit_set.oversample_disagree,
        seed=audit_set.seed,
    )
    audit_set.frame = _frame_summary(rows, drawn)
    audit_set.status = JobStatus.SUCCEEDED
    audit_set.message = ""
    audit_set.save(update_fields=["frame", "status", "message"])
    by_id = {row.item.item_id: row for row in rows}
    order = np.random.default_rng([audit_set.seed, 1]).permutation(len(drawn.item_ids))
    twice = _second_ratings(len(drawn.item_ids), audit_set.double_rating_fraction, audit_set.seed)
    items = []
    for position, index in enumerate(order.tolist()):
        item_id = drawn.item_ids[index]
        row = by_id[item_id]
        items.append(
            AuditItem(
                audit_set=audit_set,
                sample_id=row.sample_id,
                response_id=row.response_id,
                position=position,
                stratum=row.item.stratum,
                design_stratum=drawn.design_strata[item_id],
                weight=drawn.weights[item_id],
                rare=row.item.rare,
                judges_disagree=row.item.disagree,
                needs_second_rating=position in twice,
            )
        )
    AuditItem.objects.bulk_create(items, batch_size=_BATCH)
    stored = AuditItem.objects.filter(audit_set=audit_set).values_list(
        "id", "position", "needs_second_rating"
    )
    AuditLease.objects.bulk_create(
        [
            AuditLease(
                audit_set=audit_set,
                item_id=item_pk,
                slot=slot,
                position=position,
                lease_expires_at=OPEN_SINCE,
            )
            for item_pk, position, second in stored
            for slot in ((0, 1) if second else (0,))
        ],
        batch_size=_BATCH,
    )
    return audit_set


def audit_set_draw(*, dataset: Dataset, name: str, task: str, size: int, **design: Any) -> AuditSet:
    """Create and draw an audit set at once, in this process (scripts and tests)."""
    audit_set = audit_set_create(
        dataset=dataset, name=name, task=task, size=size, queue=False, **design
    )
    drawn = audit_set_draw_run(audit_set_id=audit_set.pk)
    assert drawn is not None
    if drawn.status == JobStatus.FAILED:
        drawn.delete()
        raise ValidationError({"task": drawn.message}, code="empty_frame")
    return drawn


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
    for attempt in range(_CLAIM_ATTEMPTS):
        try:
            return _claim_once(audit_set=audit_set, auditor=auditor, now=now or timezone.now())
        except IntegrityError:
            # A concurrent claim by the same auditor won the one-open-lease constraint: the
            # next attempt returns that lease.
            if attempt == _CLAIM_ATTEMPTS - 1:
                raise
    return None  # pragma: no cover - the loop returns or raises


@transaction.atomic
def _claim_once(*, audit_set: AuditSet, auditor: User, now: dt.datetime) -> Lease | None:
    expires = now + dt.timedelta(seconds=audit_set.lease_seconds)
    held = (
        AuditLease.objects.select_for_update()
        .filter(audit_set=audit_set, auditor=auditor, done=False)
        .first()
    )
    if held is not None:
        AuditLease.objects.filter(pk=held.pk).update(lease_expires_at=expires)
        return Lease(held.pk, held.item_id, held.slot, expires, resumed=True)
    mine = AuditLease.objects.filter(item=OuterRef("item"), auditor=auditor)
    lease = (
        AuditLease.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(audit_set=audit_set, done=False, lease_expires_at__lt=now)
        .exclude(Exists(mine))
        .order_by("slot", "position")
        .only("id", "item_id", "slot")
        .first()
    )
    if lease is None:
        return None
    AuditLease.objects.filter(pk=lease.pk).update(
        auditor=auditor, leased_at=now, lease_expires_at=expires
    )
    return Lease(lease.pk, lease.item_id, lease.slot, expires, resumed=False)


@transaction.atomic
def audit_release(*, audit_set: AuditSet, auditor: User) -> bool:
    """Give back the auditor's unfinished lease; True when there was one."""
    freed = AuditLease.objects.filter(audit_set=audit_set, auditor=auditor, done=False).update(
        auditor=None, leased_at=None, lease_expires_at=OPEN_SINCE
    )
    return freed > 0


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
    return SubmitResult(rating, created=True)
