"""Bulk actions too large for a web request, run as background jobs.

A selection of more than ``INLINE_MAX`` samples is not moved in the request (40,000 samples
take 10-40 s: ``docs/performance.md``): the request records a ``SampleBulkJob`` and a worker
runs the same action in one transaction, finishing the job in that transaction, so a worker
that dies or a job taken over leaves nothing half done and a second run changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import QueryDict
from django.utils.translation import gettext as _

from annotation.extensions import review_queue_assignees_check
from annotation.models import Dataset, SampleBulkJob
from annotation.sample_filters import BulkAction, SampleFilter
from annotation.selectors import samples_selected
from annotation.services.bulk import PRIORITY_RANGE, BulkResult, samples_bulk_action
from core import jobs
from core.jobs import JobStatus, JobStopped, SweepResult
from core.tasks import enqueue

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

# Selections up to this size move inside the request (about 1-2 s at the measured rates).
INLINE_MAX = 2000
TASK = "annotation.run_sample_bulk_job"


def bulk_action_check(
    *,
    action: str,
    priority: int | None,
    reason: str,
    dataset: Dataset | None = None,
    assignees: Sequence[str] = (),
) -> None:
    """Refuse at once what the action itself would refuse, before a job is queued."""
    if action not in BulkAction.values:
        raise ValidationError(
            {"action": _("Unknown action “%(action)s”.") % {"action": action}}, code="bad_action"
        )
    if action == BulkAction.TAKE_DOWN and not reason.strip():
        raise ValidationError({"reason": _("Say why these samples are taken down.")})
    if action == BulkAction.SET_PRIORITY:
        low, high = PRIORITY_RANGE
        if priority is None:
            raise ValidationError({"priority": _("Give the new priority.")}, code="no_priority")
        if not low <= priority <= high:
            message = _("A priority lies between %(low)d and %(high)d.") % {
                "low": low,
                "high": high,
            }
            raise ValidationError({"priority": message}, code="bad_priority")
    if action == BulkAction.ASSIGN and dataset is not None:
        review_queue_assignees_check(dataset=dataset, usernames=assignees)


@transaction.atomic
def sample_bulk_job_create(
    *,
    dataset: Dataset,
    action: str,
    filter: SampleFilter,
    ids: Sequence[int] | None,
    selected: int,
    by: User | None,
    priority: int | None = None,
    reason: str = "",
    assignees: Sequence[str] = (),
) -> SampleBulkJob:
    """Record a bulk action for a worker; its task is sent once the request commits."""
    bulk_action_check(
        action=action, priority=priority, reason=reason, dataset=dataset, assignees=assignees
    )
    job = SampleBulkJob.objects.create(
        dataset=dataset,
        action=action,
        params={
            "filter": urlencode(filter.to_params()),
            "ids": None if ids is None else list(ids),
            "priority": priority,
            "reason": reason,
            "assignees": list(assignees),
        },
        selected=selected,
        created_by=by,
    )
    transaction.on_commit(lambda: _enqueue(job.pk))
    return job


def samples_bulk_start(
    *,
    dataset: Dataset,
    action: str,
    filter: SampleFilter,
    ids: Sequence[int] | None,
    by: User | None,
    priority: int | None = None,
    reason: str = "",
    assignees: Sequence[str] = (),
) -> BulkResult | SampleBulkJob:
    """Run a bulk action on the samples that the filter (and ``ids``) select, in this request,
    or, on more than ``INLINE_MAX`` of them, record it as a job for a worker (the job returned).

    The sample list's page and its API both start bulk actions here.
    """
    samples = samples_selected(dataset=dataset, filter=filter, ids=ids)
    selected = samples.count()
    if selected > INLINE_MAX:
        return sample_bulk_job_create(
            dataset=dataset,
            action=action,
            filter=filter,
            ids=ids,
            selected=selected,
            by=by,
            priority=priority,
            reason=reason,
            assignees=assignees,
        )
    return samples_bulk_action(
        dataset=dataset,
        action=action,
        samples=samples,
        filter=filter,
        by=by,
        priority=priority,
        reason=reason,
        assignees=assignees,
    )


def sample_bulk_job_run(*, job_id: int) -> SampleBulkJob | None:
    """Run a queued bulk action. Safe to run twice: a finished job, or one alive in another
    worker, is left alone; the action and the job's end commit together."""
    claim = jobs.job_claim(SampleBulkJob, job_id)
    job = SampleBulkJob.objects.select_related("dataset", "created_by").filter(pk=job_id).first()
    if claim is None or job is None:
        return job
    params = job.params
    try:
        with jobs.job_heartbeat(claim), transaction.atomic():
            filter = SampleFilter.from_params(QueryDict(params.get("filter") or ""))
            result = samples_bulk_action(
                dataset=job.dataset,
                action=job.action,
                samples=samples_selected(dataset=job.dataset, filter=filter, ids=params.get("ids")),
                filter=filter,
                by=job.created_by,
                priority=params.get("priority"),
                reason=params.get("reason") or "",
                assignees=params.get("assignees") or (),
            )
            finished = jobs.job_finish(
                claim,
                status=JobStatus.SUCCEEDED,
                changed=result.changed,
                skipped=result.skipped,
                slots_opened=result.slots_opened,
            )
            if not finished:
                raise JobStopped
    except JobStopped:
        logger.info("bulk job %s was cancelled or taken over; its changes were rolled back", job_id)
    except ValidationError as exc:
        jobs.job_finish(claim, status=JobStatus.FAILED, message=" ".join(exc.messages))
    except Exception as exc:
        logger.exception("bulk job %s failed", job_id)
        jobs.job_finish(
            claim,
            status=JobStatus.FAILED,
            message=_("The action failed: %(error)s") % {"error": exc},
        )
    job.refresh_from_db()
    return job


def sample_bulk_jobs_sweep() -> SweepResult:
    """Queue again the bulk jobs whose worker died and send those whose message was lost."""
    return jobs.job_sweep(SampleBulkJob, send=lambda pk: enqueue(TASK, pk))


def _enqueue(job_id: int) -> None:
    jobs.job_enqueue(SampleBulkJob, job_id, lambda: enqueue(TASK, job_id))
