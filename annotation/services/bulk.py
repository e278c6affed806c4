"""Actions on many samples at once: send to review, set priority, take down, restore, assign
to annotators and unassign (the review queue's assignments, through its port).

Each status move is written to every sample's history, a few statements per thousand samples
rather than per sample (40,000 samples move in well under a minute); then the review queue is
told through ``annotation.extensions`` so that it opens, re-orders or closes review slots in
the same transaction.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.extensions import (
    review_queue_assign,
    review_queue_sync,
    review_queue_unassign,
)
from annotation.models import (
    ChangeSource,
    Dataset,
    Sample,
    SampleRevision,
    SampleStatus,
    WebhookEvent,
)
from annotation.sample_filters import BulkAction, SampleFilter
from annotation.webhooks.services import IDS_IN_EVENT, webhook_event_emit

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Statuses a sample may be sent to review from: never reviewed, or settled and to be reviewed
# again (a new round). Samples in review or awaiting adjudication are already in the workflow.
SENDABLE = (SampleStatus.IMPORTED, SampleStatus.VERIFIED, SampleStatus.REJECTED)
# Samples per statement of a bulk action (one id parameter each).
BATCH = 900
PRIORITY_RANGE = (-1000, 1000)
# The statuses of the review workflow, which the review app moves samples between in bulk.
REVIEW_WORKFLOW = (
    SampleStatus.PENDING_REVIEW,
    SampleStatus.IN_REVIEW,
    SampleStatus.VERIFIED,
    SampleStatus.REJECTED,
    SampleStatus.NEEDS_ADJUDICATION,
)


@dataclass(frozen=True)
class BulkResult:
    """What a bulk action did: samples changed, samples it left alone, review slots opened."""

    changed: int
    skipped: int = 0
    slots_opened: int = 0


def _chunks(items: Iterable[Any], size: int = BATCH) -> Iterator[list[Any]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _move(
    *,
    rows: list[tuple[int, int, str, str]],
    by: User | None,
    source: str,
    reason: str,
) -> int:
    """Move locked samples, given as (id, revision, from status, to status), and write one
    history row each. The caller holds the transaction and the row locks."""
    now = timezone.now()
    groups: dict[str, list[int]] = defaultdict(list)
    for sample_id, _revision, _from, to in rows:
        groups[to].append(sample_id)
    for to, ids in groups.items():
        for chunk in _chunks(ids):
            Sample.objects.filter(pk__in=chunk).update(
                status=to, revision=F("revision") + 1, updated_at=now
            )
    SampleRevision.objects.bulk_create(
        (
            SampleRevision(
                sample_id=sample_id,
                number=revision + 1,
                changed_by=by,
                source=source,
                before={"status": before},
                after={"status": after},
                reason=reason,
            )
            for sample_id, revision, before, after in rows
        ),
        batch_size=BATCH,
    )
    return len(rows)


def _locked(samples: QuerySet[Sample]) -> list[tuple[int, int, str]]:
    """(id, revision, status) of the samples, locked until the transaction ends."""
    return list(
        samples.select_for_update(of=("self",))
        .order_by("id")
        .values_list("id", "revision", "status")
    )


@transaction.atomic
def samples_send_to_review(
    *,
    dataset: Dataset,
    samples: QuerySet[Sample],
    by: User | None,
    from_statuses: Iterable[str] = (SampleStatus.IMPORTED,),
    reason: str = "",
) -> BulkResult:
    """Move the given samples that are in ``from_statuses`` to "pending review", recorded in
    their history, and have the review queue open their slots.

    ``samples`` is any selection of the dataset's samples (the sample list's filter, chosen
    ids); those in other statuses are counted as skipped and left alone.
    """
    wanted = tuple(dict.fromkeys(from_statuses))
    refused = [s for s in wanted if s not in SENDABLE]
    if refused or not wanted:
        raise ValidationError(
            _("Only samples that are %(allowed)s can be sent to review.")
            % {"allowed": ", ".join(str(SampleStatus(s).label) for s in SENDABLE)},
            code="not_sendable",
        )
    rows = _locked(samples.filter(dataset=dataset))
    sent: list[tuple[int, int, str, str]] = [
        (i, r, s, SampleStatus.PENDING_REVIEW) for i, r, s in rows if s in wanted
    ]
    moved = _move(
        rows=sent,
        by=by,
        source=ChangeSource.STATUS,
        reason=reason or _("Sent to review"),
    )
    # Only the samples sent get slots: the queue's work follows them, not the dataset.
    slots = review_queue_sync(dataset=dataset, sample_ids=[i for i, *_ in sent]) if moved else 0
    return BulkResult(changed=moved, skipped=len(rows) - moved, slots_opened=slots)


@transaction.atomic
def samples_move_in_review(
    *, dataset: Dataset, moves: Mapping[int, str], by: User | None, reason: str
) -> BulkResult:
    """Move samples between the statuses of the review workflow, each to the status given
    (a settled sample back to review, one in review or settled on to adjudication), recorded
    in their history, and have the review queue follow. Samples outside the workflow, or
    already in their status, are skipped."""
    refused = set(moves.values()) - set(REVIEW_WORKFLOW)
    if refused:
        raise ValidationError(_("Unknown status “%(status)s”.") % {"status": min(refused)})
    rows = _locked(Sample.objects.filter(dataset=dataset, pk__in=list(moves)))
    moved = _move(
        rows=[(i, r, s, moves[i]) for i, r, s in rows if s in REVIEW_WORKFLOW and s != moves[i]],
        by=by,
        source=ChangeSource.REVIEW,
        reason=reason,
    )
    slots = review_queue_sync(dataset=dataset) if moved else 0
    return BulkResult(changed=moved, skipped=len(rows) - moved, slots_opened=slots)


@transaction.atomic
def samples_take_down(
    *, dataset: Dataset, samples: QuerySet[Sample], by: User | None, reason: str
) -> BulkResult:
    """Remove samples on takedown (they leave the queue and every later snapshot); the reason
    is required and kept in each sample's history. Restore brings them back."""
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": _("Say why these samples are taken down.")})
    rows = _locked(samples.filter(dataset=dataset))
    moved = _move(
        rows=[(i, r, s, SampleStatus.REMOVED) for i, r, s in rows if s != SampleStatus.REMOVED],
        by=by,
        source=ChangeSource.TAKEDOWN,
        reason=reason,
    )
    if moved:
        review_queue_sync(dataset=dataset)
        taken = [i for i, _r, s in rows if s != SampleStatus.REMOVED]
        ids = list(
            Sample.objects.filter(pk__in=taken[:IDS_IN_EVENT])
            .order_by("id")
            .values_list("external_id", flat=True)
        )
        webhook_event_emit(
            event=WebhookEvent.TAKEDOWN,
            dataset=dataset,
            data={
                "count": moved,
                "external_ids": ids,
                "reason": reason,
                "by": by.get_username() if by is not None else None,
            },
        )
    return BulkResult(changed=moved, skipped=len(rows) - moved)


@transaction.atomic
def samples_restore(
    *, dataset: Dataset, samples: QuerySet[Sample], by: User | None, reason: str = ""
) -> BulkResult:
    """Bring removed samples back to the status they had before their takedown (imported when
    the history does not say), recorded in their history; samples that were in review get
    their review slots back."""
    rows = _locked(samples.filter(dataset=dataset))
    removed = [(i, r, s) for i, r, s in rows if s == SampleStatus.REMOVED]
    earlier = _status_before_takedown([sample_id for sample_id, _r, _s in removed])
    moved = _move(
        rows=[(i, r, s, earlier.get(i, SampleStatus.IMPORTED)) for i, r, s in removed],
        by=by,
        source=ChangeSource.STATUS,
        reason=reason or _("Restored after takedown"),
    )
    slots = review_queue_sync(dataset=dataset) if moved else 0
    return BulkResult(changed=moved, skipped=len(rows) - moved, slots_opened=slots)


def _status_before_takedown(sample_ids: list[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for chunk in _chunks(sample_ids):
        history = (
            SampleRevision.objects.filter(sample_id__in=chunk, after__status=SampleStatus.REMOVED)
            .order_by("sample_id", "number")
            .values_list("sample_id", "before")
        )
        for sample_id, before in history:
            status = (before or {}).get("status")
            if status == SampleStatus.IN_REVIEW:
                # Its open slots went with the takedown: back to pending review, the queue
                # reopens the missing slots and keeps the reviews already given.
                status = SampleStatus.PENDING_REVIEW
            if status in SampleStatus.values and status != SampleStatus.REMOVED:
                found[sample_id] = status  # the latest takedown wins (ordered by number)
    return found


@transaction.atomic
def samples_set_priority(
    *, dataset: Dataset, samples: QuerySet[Sample], priority: int
) -> BulkResult:
    """Set the review priority of samples (higher is served first); the queue follows."""
    low, high = PRIORITY_RANGE
    if not low <= priority <= high:
        message = _("A priority lies between %(low)d and %(high)d.") % {"low": low, "high": high}
        raise ValidationError({"priority": message}, code="bad_priority")
    ids = [sample_id for sample_id, _r, _s in _locked(samples.filter(dataset=dataset))]
    changed = 0
    for chunk in _chunks(ids):
        changed += (
            Sample.objects.filter(pk__in=chunk)
            .exclude(priority=priority)
            .update(priority=priority, updated_at=timezone.now())
        )
    if changed:
        review_queue_sync(dataset=dataset)
    return BulkResult(changed=changed, skipped=len(ids) - changed)


def samples_assign(
    *, dataset: Dataset, samples: QuerySet[Sample], assignees: Sequence[str], by: User | None
) -> BulkResult:
    """Assign the samples to each of the annotators named (members of the dataset with the
    annotator role; ValidationError naming anyone else): the review queue serves them to
    those people first, and to nobody else while one of them can still take them.
    ``changed`` counts the assignments made (one per sample and person)."""
    ids = list(samples.filter(dataset=dataset).order_by("id").values_list("id", flat=True))
    made = review_queue_assign(dataset=dataset, sample_ids=ids, usernames=assignees, by=by)
    return BulkResult(changed=made)


def samples_unassign(
    *, dataset: Dataset, samples: QuerySet[Sample], assignees: Sequence[str]
) -> BulkResult:
    """Take the samples back from the people named (from everyone, when none is): they go
    back to the common queue. ``changed`` counts the assignments removed."""
    ids = list(samples.filter(dataset=dataset).order_by("id").values_list("id", flat=True))
    removed = review_queue_unassign(dataset=dataset, sample_ids=ids, usernames=assignees)
    return BulkResult(changed=removed)


def send_from_statuses(filter: SampleFilter) -> tuple[str, ...]:
    """The statuses "send to review" moves for a sample list filter: the statuses it names, or
    imported samples only, so that sending a whole unfiltered list never re-opens settled
    samples."""
    return filter.statuses or (SampleStatus.IMPORTED,)


def samples_bulk_action(
    *,
    dataset: Dataset,
    action: str,
    samples: QuerySet[Sample],
    filter: SampleFilter,
    by: User | None,
    priority: int | None = None,
    reason: str = "",
    assignees: Sequence[str] = (),
) -> BulkResult:
    """Run one of the sample list's bulk actions on a selection (the page's and the API's)."""
    if action == BulkAction.SEND_TO_REVIEW:
        return samples_send_to_review(
            dataset=dataset,
            samples=samples,
            by=by,
            from_statuses=send_from_statuses(filter),
            reason=reason,
        )
    if action == BulkAction.SET_PRIORITY:
        if priority is None:
            raise ValidationError({"priority": _("Give the new priority.")}, code="no_priority")
        return samples_set_priority(dataset=dataset, samples=samples, priority=priority)
    if action == BulkAction.TAKE_DOWN:
        return samples_take_down(dataset=dataset, samples=samples, by=by, reason=reason)
    if action == BulkAction.RESTORE:
        return samples_restore(dataset=dataset, samples=samples, by=by, reason=reason)
    if action == BulkAction.ASSIGN:
        return samples_assign(dataset=dataset, samples=samples, assignees=assignees, by=by)
    if action == BulkAction.UNASSIGN:
        return samples_unassign(dataset=dataset, samples=samples, assignees=assignees)
    raise ValidationError(
        {"action": _("Unknown action “%(action)s”.") % {"action": action}}, code="bad_action"
    )


def dataset_send_imports_on(*, dataset: Dataset, by: User | None = None) -> BulkResult | None:
    """At the end of an import: when the dataset says so, send its imported samples to review.

    None when the dataset's "send new imports to review automatically" is off.
    """
    fresh = Dataset.objects.filter(pk=dataset.pk).values_list("auto_send_to_review", flat=True)
    if not fresh.first():
        return None
    return samples_send_to_review(
        dataset=dataset,
        # Those that can be sent only, found by the (dataset, status) index: an import's end
        # never locks the dataset's other samples.
        samples=Sample.objects.filter(dataset=dataset, status=SampleStatus.IMPORTED),
        by=by,
        reason=_("Sent to review automatically after an import"),
    )
