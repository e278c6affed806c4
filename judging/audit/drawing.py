"""Drawing an audit set: its design checked at once, the draw itself run by a worker.

The draw is a job (``core.jobs``): claimed by one worker at a time, with a heartbeat, drawn
again when its worker dies, failed with the reason after JOB_MAX_ATTEMPTS attempts, and
retried on request.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Required, TypedDict, Unpack

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.models import Dataset, JobStatus
from core import jobs
from core.jobs import RETRYABLE, Claim, JobStopped, SweepResult
from core.leases import OPEN_SINCE
from core.tasks import enqueue
from judging.audit import computations, selectors
from judging.models import AllocationMethod, AuditItem, AuditLease, AuditSet, AuditTask
from judging.stats.sampling import AuditSample, draw_audit_sample, strata_sizes

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

MAX_AUDIT_SIZE = 50_000
MAX_SEED = 2**63 - 1
MAX_OVERSAMPLING = 100.0
BATCH = 2000


class DesignFields(TypedDict, total=False):
    """A design as given, before audit_design_check (AuditDesign's defaults fill the rest)."""

    task: Required[str]
    size: Required[int]
    method: str
    floor: int
    oversample_rare: float
    oversample_disagree: float
    seed: int
    double_rating_fraction: float


@dataclass(frozen=True)
class AuditDesign:
    """The parameters of a draw, checked."""

    task: str
    size: int
    method: str = AllocationMethod.PROPORTIONAL
    floor: int = 0
    oversample_rare: float = 1.0
    oversample_disagree: float = 1.0
    seed: int = 0
    double_rating_fraction: float = 0.1


def audit_design_check(**fields: Unpack[DesignFields]) -> AuditDesign:
    """Validate a design (AuditDesign's defaults fill what is left out); every problem is
    reported at once, by field."""
    design = AuditDesign(**fields)
    errors: dict[str, str] = {}
    if design.task not in AuditTask.values:
        errors["task"] = _("Choose scoring, answerability or safety.")
    if not 1 <= design.size <= MAX_AUDIT_SIZE:
        errors["size"] = _("Between 1 and %(max)d items.") % {"max": MAX_AUDIT_SIZE}
    if design.method not in AllocationMethod.values:
        errors["method"] = _("Choose proportional, square-root or equal allocation.")
    if design.floor < 0 or design.floor > MAX_AUDIT_SIZE:
        errors["floor"] = _("The floor per stratum cannot be negative.")
    for name, value in (
        ("oversample_rare", design.oversample_rare),
        ("oversample_disagree", design.oversample_disagree),
    ):
        if not (math.isfinite(value) and 1.0 <= value <= MAX_OVERSAMPLING):
            errors[name] = _("An oversampling factor lies between 1 and %(max)d.") % {
                "max": int(MAX_OVERSAMPLING)
            }
    if not 0 <= design.seed <= MAX_SEED:
        errors["seed"] = _("The seed is a whole number from 0 to 2⁶³ − 1.")
    share = design.double_rating_fraction
    if not (math.isfinite(share) and 0.0 <= share <= 1.0):
        errors["double_rating_fraction"] = _("The share of items rated twice lies in [0, 1].")
    if errors:
        raise ValidationError(errors, code="bad_design")
    return design


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
    import numpy as np  # drawn in a worker; web processes import this module too

    count = min(n_items, round(fraction * n_items))
    rng = np.random.default_rng([seed, 2])
    return {int(i) for i in rng.choice(n_items, size=count, replace=False)}


@transaction.atomic
def audit_set_create(
    *,
    dataset: Dataset,
    name: str,
    by: User | None = None,
    queue: bool = True,
    **fields: Unpack[DesignFields],
) -> AuditSet:
    """Record an audit set's design and queue its draw for a worker (on commit).

    A bad design or a taken name is refused at once, with readable messages; the frame (every
    judged item of the dataset, possibly hundreds of thousands) is read by the worker.
    """
    design = audit_design_check(**fields)
    name = name.strip()
    if not name or len(name) > 200:
        raise ValidationError({"name": _("Give the audit set a name (200 characters at most).")})
    if AuditSet.objects.filter(dataset=dataset, name=name).exists():
        raise ValidationError({"name": _("This dataset already has an audit set of that name.")})
    audit_set = AuditSet.objects.create(
        dataset=dataset,
        name=name,
        **dataclasses.asdict(design),
        status=JobStatus.QUEUED,
        created_by=by,
    )
    if queue:
        transaction.on_commit(lambda: _enqueue(audit_set.pk))
    return audit_set


def audit_set_draw_run(*, audit_set_id: int) -> AuditSet | None:
    """Draw a queued audit set: read the frame, sample it, store items and rating slots.

    The draw is :func:`judging.stats.sampling.draw_audit_sample` over the frame of
    :func:`selectors.audit_frame`; the same frame, design and seed give the same items in the
    same order. Items are put in a seeded random order, so that a half-finished audit is a
    random half; a seeded share of them gets a second rating slot. The items, the slots and
    the set's new status commit together. Safe to run twice: a set already drawn (or failed),
    or being drawn by a live worker, is left as it is; one whose worker died is drawn again.
    """
    claim = jobs.job_claim(AuditSet, audit_set_id)
    if claim is None:
        return AuditSet.objects.filter(pk=audit_set_id).first()
    audit_set = AuditSet.objects.select_related("dataset").get(pk=audit_set_id)
    try:
        with jobs.job_heartbeat(claim), transaction.atomic():
            _draw(audit_set, claim)
    except JobStopped:
        logger.info("audit set %s was taken over", audit_set_id)
    except Exception as exc:
        logger.exception("drawing audit set %s failed", audit_set_id)
        jobs.job_finish(
            claim,
            status=JobStatus.FAILED,
            message=f"{type(exc).__name__}: {exc}",
        )
    audit_set.refresh_from_db()
    return audit_set


def _draw(audit_set: AuditSet, claim: Claim) -> None:
    rows = selectors.audit_frame(dataset=audit_set.dataset, task=audit_set.task)
    if not rows:
        message = _("No judged items of this task yet: run the judges first.")
        if not jobs.job_finish(claim, status=JobStatus.FAILED, message=message):
            raise JobStopped
        return
    drawn = draw_audit_sample(
        [row.item for row in rows],
        n=audit_set.size,
        method=audit_set.method,  # type: ignore[arg-type]
        floor=audit_set.floor,
        oversample_rare=audit_set.oversample_rare,
        oversample_disagree=audit_set.oversample_disagree,
        seed=audit_set.seed,
    )
    by_id = {row.item.item_id: row for row in rows}
    import numpy as np

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
    # A set drawn by an earlier attempt whose worker died committed nothing: the items, the
    # slots and the status below commit together, fenced by this attempt.
    AuditItem.objects.bulk_create(items, batch_size=BATCH)
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
        batch_size=BATCH,
    )
    if not jobs.job_finish(claim, status=JobStatus.SUCCEEDED, frame=_frame_summary(rows, drawn)):
        raise JobStopped
    computations.audit_statistics_request(audit_set=audit_set)


def audit_set_retry(*, audit_set: AuditSet) -> AuditSet:
    """Draw a failed audit set again (after the judges ran, for instance)."""
    with transaction.atomic():
        locked = AuditSet.objects.select_for_update().get(pk=audit_set.pk)
        if locked.status not in RETRYABLE:
            raise ValidationError(_("Only a failed draw can be retried."), code="not_failed")
        AuditSet.objects.filter(pk=locked.pk).update(**jobs.job_retry_fields())
        transaction.on_commit(lambda: _enqueue(locked.pk))
    audit_set.refresh_from_db()
    return audit_set


def audit_sets_sweep() -> SweepResult:
    """Draw again the sets whose worker died and send those whose message was lost."""
    return jobs.job_sweep(AuditSet, send=lambda pk: enqueue("judging.draw_audit_set", pk))


def _enqueue(audit_set_id: int) -> None:
    jobs.job_enqueue(
        AuditSet, audit_set_id, lambda: enqueue("judging.draw_audit_set", audit_set_id)
    )


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
