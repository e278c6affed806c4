"""The review queue: per-dataset settings, the k slots of each sample, claims, skips, releases.

Claiming locks one claimable slot with ``SELECT … FOR UPDATE SKIP LOCKED`` in the order of the
partial index ``slot_claim_order_idx`` and leases it, so concurrent reviewers never wait on each
other nor take the same slot. On SQLite (local demo mode) the row lock is a no-op and the
database's single writer (transactions begin IMMEDIATE) serialises claims instead.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import selectors as annotation_selectors
from annotation.models import Dataset, Sample, SampleStatus
from review.models import Outcome, ReviewSettings, Skip, Slot
from review.selectors import review_settings_get
from review.services.claim_sql import claim_statement
from review.services.reviews import sample_settle_round

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The lease expiry of a slot nobody holds: long past, so "claimable" is one comparison.
OPEN_SINCE = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
QUEUED_STATUSES = (SampleStatus.PENDING_REVIEW, SampleStatus.IN_REVIEW)
_CLAIM_ATTEMPTS = 3
_DEFAULT_LEASE_SECONDS: int = ReviewSettings._meta.get_field("lease_seconds").default


@dataclass(frozen=True)
class Lease:
    slot_id: int
    sample_id: int
    dataset_id: int
    expires_at: dt.datetime
    resumed: bool


def review_settings_update(
    *,
    dataset: Dataset,
    overlap: int,
    blind: bool,
    show_judge_hints: bool,
    lease_seconds: int,
) -> ReviewSettings:
    """Save a dataset's review settings; a changed overlap resizes an open queue."""
    if not 1 <= overlap <= 10:
        raise ValidationError(
            {"overlap": _("Between 1 and 10 reviews per sample.")}, code="bad_overlap"
        )
    if not 30 <= lease_seconds <= 7 * 24 * 3600:
        raise ValidationError(
            {"lease_seconds": _("A lease lasts between 30 seconds and a week.")},
            code="bad_lease",
        )
    with transaction.atomic():
        current = review_settings_get(dataset=dataset)
        resized = current.pk is not None and current.overlap != overlap
        current.overlap = overlap
        current.blind = blind
        current.show_judge_hints = show_judge_hints
        current.lease_seconds = lease_seconds
        current.save()
        if resized and Slot.objects.filter(dataset=dataset).exists():
            queue_sync(dataset=dataset)
    return current


@transaction.atomic
def queue_sync(*, dataset: Dataset, batch_size: int = 5000) -> int:
    """Give every sample awaiting review its k slots and refresh the queue order.

    Creates missing slots, removes open slots beyond k (never a leased or filled one) and the
    unfinished slots of samples no longer awaiting review (taken down), and copies each
    sample's ``judges_disagree`` and ``priority`` onto its open slots. A sample back in review
    after it was settled (a re-import changed it) gets k slots in a new round. Safe to run any
    number of times. Returns the number of slots created.
    """
    review_settings = review_settings_get(dataset=dataset)
    if review_settings.pk is None:
        review_settings.save()  # an open queue keeps the settings it was opened with
    k = review_settings.overlap
    queued = list(
        annotation_selectors.sample_list(dataset=dataset)
        .filter(status__in=QUEUED_STATUSES)
        .values_list("id", "judges_disagree", "priority", "status")
    )
    order = {sample_id: (disagree, priority) for sample_id, disagree, priority, _s in queued}
    in_review = {sid for sid, *_rest, status in queued if status == SampleStatus.IN_REVIEW}
    settled = set(Outcome.objects.filter(dataset=dataset).values_list("sample_id", flat=True))
    rounds: dict[int, int] = {}  # sample -> its latest round
    existing: dict[int, set[int]] = {}  # sample -> positions in its latest round
    open_slots: dict[int, int] = {}  # sample -> open slots in its latest round that stay
    stale: list[Slot] = []
    for slot in (
        Slot.objects.filter(dataset=dataset)
        .only(
            "id",
            "sample_id",
            "round",
            "position",
            "judges_disagree",
            "priority",
            "done",
            "reviewer_id",
        )
        .order_by("sample_id", "round")
    ):
        if slot.round != rounds.get(slot.sample_id):
            rounds[slot.sample_id] = slot.round
            existing[slot.sample_id], open_slots[slot.sample_id] = set(), 0
        existing[slot.sample_id].add(slot.position)
        removed = not slot.done and slot.reviewer_id is None and slot.position >= k
        open_slots[slot.sample_id] += not slot.done and not removed
        wanted = order.get(slot.sample_id)
        if wanted and not slot.done and (slot.judges_disagree, slot.priority) != wanted:
            slot.judges_disagree, slot.priority = wanted
            stale.append(slot)
    Slot.objects.bulk_update(stale, ["judges_disagree", "priority"], batch_size=batch_size)
    Slot.objects.filter(
        dataset=dataset, done=False, reviewer__isnull=True, position__gte=k
    ).delete()
    _drop_slots_of_samples_out_of_review(dataset)
    # A smaller k can leave a sample in review with its k reviews and no open slot: settle it.
    finished = [sample_id for sample_id in in_review if open_slots.get(sample_id) == 0]
    for sample in annotation_selectors.samples_by_id(dataset=dataset, sample_ids=finished):
        sample_settle_round(sample=sample, review_round=rounds[sample.pk], by=None)
        order.pop(sample.pk)
    for sample_id in order.keys() & settled:
        if sample_id in rounds and not open_slots[sample_id]:
            rounds[sample_id] += 1  # reopened after settling: a new round of k reviews
            existing[sample_id] = set()
    new = [
        Slot(
            dataset=dataset,
            sample_id=sample_id,
            round=rounds.get(sample_id, 0),
            position=position,
            judges_disagree=disagree,
            priority=priority,
            lease_expires_at=OPEN_SINCE,
        )
        for sample_id, (disagree, priority) in order.items()
        for position in range(k)
        if position not in existing.get(sample_id, ())
    ]
    Slot.objects.bulk_create(new, batch_size=batch_size)
    return len(new)


def _drop_slots_of_samples_out_of_review(dataset: Dataset) -> None:
    """A sample that left review (taken down) keeps no unfinished slot: nobody is served it.

    One statement however many slots go: an unfinished slot holds no review, so Django's
    delete collector (which deletes in batches of 100 to cascade to reviews) is not needed;
    should one ever hold a review, the foreign key refuses the delete.
    """
    slots, samples = Slot._meta.db_table, annotation_selectors.sample_table()
    placeholders = ", ".join(["%s"] * len(QUEUED_STATUSES))
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {slots} WHERE dataset_id = %s AND NOT done AND sample_id IN "  # noqa: S608 - table names are the models'
            f"(SELECT id FROM {samples} WHERE dataset_id = %s AND status NOT IN ({placeholders}))",
            [dataset.pk, dataset.pk, *QUEUED_STATUSES],
        )


def slot_claim(
    *,
    dataset: Dataset,
    reviewer: User,
    skipped: bool = False,
    sample_id: int | None = None,
    now: dt.datetime | None = None,
) -> Lease | None:
    """Lease the next sample this reviewer has not reviewed and that still needs reviews.

    A reviewer holding an unfinished lease in the dataset gets it back (renewed), so a reload
    or a double click never takes a second sample. ``skipped`` serves the samples they skipped
    instead of the fresh ones; ``sample_id`` asks for one sample. None when nothing is left.
    """
    now = now or timezone.now()
    one_statement = claim_statement_applies(sample_id=sample_id)
    for attempt in range(_CLAIM_ATTEMPTS):
        try:
            if one_statement:
                return _claim_by_statement(
                    dataset=dataset, reviewer=reviewer, skipped=skipped, now=now
                )
            return _claim_once(
                dataset=dataset, reviewer=reviewer, skipped=skipped, sample_id=sample_id, now=now
            )
        except IntegrityError:
            # A concurrent claim by the same reviewer won the one-open-lease constraint:
            # the next attempt returns that lease.
            if attempt == _CLAIM_ATTEMPTS - 1:
                raise
    return None  # pragma: no cover - the loop returns or raises


def claim_statement_applies(*, sample_id: int | None) -> bool:
    """PostgreSQL runs the plain and skipped claims as one statement (``claim_sql``); asking
    for one sample, and SQLite (the local demo mode), take the ORM way below."""
    return sample_id is None and connection.vendor == "postgresql"


def _claim_by_statement(
    *, dataset: Dataset, reviewer: User, skipped: bool, now: dt.datetime
) -> Lease | None:
    row = claim_statement(
        dataset_id=dataset.pk,
        reviewer_id=reviewer.pk,
        skipped=skipped,
        now=now,
        default_lease_seconds=_DEFAULT_LEASE_SECONDS,
    )
    if row is None:
        return None
    slot_id, sample_id, expires_at, resumed = row
    return Lease(slot_id, sample_id, dataset.pk, expires_at, resumed=resumed)


@transaction.atomic
def _claim_once(
    *,
    dataset: Dataset,
    reviewer: User,
    skipped: bool,
    sample_id: int | None,
    now: dt.datetime,
) -> Lease | None:
    lease_seconds = review_settings_get(dataset=dataset).lease_seconds
    expires = now + dt.timedelta(seconds=lease_seconds)
    held = (
        Slot.objects.select_for_update()
        .filter(dataset=dataset, reviewer=reviewer, done=False)
        .first()
    )
    if held is not None:
        if sample_id is None or held.sample_id == sample_id:
            Slot.objects.filter(pk=held.pk).update(lease_expires_at=expires)
            return Lease(held.pk, held.sample_id, dataset.pk, expires, resumed=True)
        _free(held.pk)
    mine = Slot.objects.filter(
        sample=OuterRef("sample"), round=OuterRef("round"), reviewer=reviewer
    )
    skip = Skip.objects.filter(sample=OuterRef("sample"), reviewer=reviewer)
    candidates = (
        Slot.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(dataset=dataset, done=False, lease_expires_at__lt=now)
        .exclude(Exists(mine))
        .order_by("-judges_disagree", "-priority", "sample_id", "position")
        .only("id", "sample_id")
    )
    if sample_id is not None:
        candidates = candidates.filter(sample_id=sample_id)
    elif skipped:
        candidates = candidates.filter(Exists(skip))
    else:
        candidates = candidates.exclude(Exists(skip))
    slot = candidates.first()
    if slot is None:
        return None
    Slot.objects.filter(pk=slot.pk).update(
        reviewer=reviewer, leased_at=now, lease_expires_at=expires
    )
    return Lease(slot.pk, slot.sample_id, dataset.pk, expires, resumed=False)


def _free(slot_id: int) -> None:
    Slot.objects.filter(pk=slot_id, done=False).update(
        reviewer=None, leased_at=None, lease_expires_at=OPEN_SINCE
    )


@transaction.atomic
def slot_release(*, sample: Sample, reviewer: User) -> bool:
    """Give back a reviewer's unfinished lease on a sample; True when there was one."""
    held = Slot.objects.filter(sample=sample, reviewer=reviewer, done=False).first()
    if held is None:
        return False
    _free(held.pk)
    return True


@transaction.atomic
def slot_skip(*, sample: Sample, reviewer: User, reason: str) -> Skip:
    """Set a sample aside with a reason: its lease goes back to the pool and the reviewer's
    "next" no longer serves it, until they ask for their skipped samples."""
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": _("Say why you skip this sample.")}, code="no_reason")
    if len(reason) > 500:
        raise ValidationError({"reason": _("Keep the reason under 500 characters.")})
    skip, _created = Skip.objects.update_or_create(
        sample=sample,
        reviewer=reviewer,
        defaults={"reason": reason, "dataset_id": sample.dataset_id},
    )
    slot_release(sample=sample, reviewer=reviewer)
    return skip
