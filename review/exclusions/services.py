"""Quality in consensus: a lead excludes a reviewer of a dataset from its consensus (and takes
it back), and sends the samples whose Dawid–Skene label is uncertain to adjudication.

Excluding a reviewer settles again exactly the samples they reviewed in their latest round,
through the same settlement a submission runs (``reviews.sample_settle_round``): a settled
sample keeps its k counted reviews and is settled on them, or goes back to review when fewer
than k remain (the queue then opens the slots it needs, one per excluded review). A sample
in review gets those slots, or is settled once it has k counted reviews. Adjudicated samples
are the lead's decision and are left alone. Taking the exclusion back runs the same steps
with the reviewer counted again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, OuterRef, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import selectors as annotation_selectors
from annotation import services as annotation_services
from annotation.models import Dataset, Sample, SampleStatus
from review import settling
from review.models import Outcome, Review, ReviewerExclusion, Slot
from review.queue.services import queue_sync
from review.selectors import review_settings_get
from review.services.reviews import sample_settle_round

if TYPE_CHECKING:
    from django.contrib.auth.models import User

BATCH = 500
MAX_REASON = 1000
SETTLED = (SampleStatus.VERIFIED, SampleStatus.REJECTED, SampleStatus.NEEDS_ADJUDICATION)
QUEUED = (SampleStatus.PENDING_REVIEW, SampleStatus.IN_REVIEW)


@dataclass(frozen=True)
class Resettled:
    """What an exclusion (or its undo) did to the samples the reviewer reviewed."""

    affected: int  # samples reviewed by the reviewer in their latest round
    resettled: int  # settled (again) on their counted reviews
    returned: int  # back to review: fewer than k counted reviews
    left: int  # unchanged: adjudicated, removed, or in review under k counted reviews


@transaction.atomic
def reviewer_exclude(*, dataset: Dataset, reviewer: User, by: User, reason: str = "") -> Resettled:
    """Leave a reviewer's reviews of the dataset out of its consensus and settle again the
    samples they reviewed."""
    reason = reason.strip()
    if len(reason) > MAX_REASON:
        raise ValidationError(
            {"reason": _("Keep the reason under 1,000 characters.")}, code="long_reason"
        )
    if ReviewerExclusion.objects.filter(dataset=dataset, reviewer=reviewer).exists():
        raise ValidationError(
            _("%(name)s is already excluded from this dataset's consensus.")
            % {"name": reviewer.get_username()},
            code="already_excluded",
        )
    ReviewerExclusion.objects.create(
        dataset=dataset, reviewer=reviewer, excluded_by=by, reason=reason
    )
    return _resettle(dataset=dataset, reviewer=reviewer, by=by)


@transaction.atomic
def reviewer_include(*, dataset: Dataset, reviewer: User, by: User) -> Resettled:
    """Count an excluded reviewer's reviews again and settle again the samples they reviewed."""
    deleted, _rows = ReviewerExclusion.objects.filter(dataset=dataset, reviewer=reviewer).delete()
    if not deleted:
        raise ValidationError(
            _("%(name)s is not excluded from this dataset's consensus.")
            % {"name": reviewer.get_username()},
            code="not_excluded",
        )
    return _resettle(dataset=dataset, reviewer=reviewer, by=by)


def affected_sample_ids(*, dataset: Dataset, reviewer: User) -> list[int]:
    """The samples the reviewer reviewed in their latest round (one query)."""
    latest = (
        Slot.objects.filter(sample_id=OuterRef("sample_id"), gold=False)
        .order_by("-round")
        .values("round")[:1]
    )
    return sorted(
        Review.objects.filter(dataset=dataset, reviewer=reviewer, round=Subquery(latest))
        .values_list("sample_id", flat=True)
        .distinct()
    )


def counted_reviews(*, dataset: Dataset, sample_ids: Iterable[int]) -> dict[int, int]:
    """Per sample, its reviews in its latest round by reviewers not excluded (one query)."""
    latest = (
        Slot.objects.filter(sample_id=OuterRef("sample_id"), gold=False)
        .order_by("-round")
        .values("round")[:1]
    )
    excluded = ReviewerExclusion.objects.filter(dataset=dataset).values("reviewer_id")
    rows = (
        Review.objects.filter(sample_id__in=list(sample_ids), round=Subquery(latest))
        .exclude(reviewer_id__in=excluded)
        .values("sample_id")
        .annotate(n=Count("id"))
        .values_list("sample_id", "n")
    )
    return dict(rows)


def _resettle(*, dataset: Dataset, reviewer: User, by: User) -> Resettled:
    k = review_settings_get(dataset=dataset).overlap
    affected = affected_sample_ids(dataset=dataset, reviewer=reviewer)
    settle: dict[int, int] = {}  # sample -> its latest round
    moves: dict[int, str] = {}
    for start in range(0, len(affected), BATCH):
        chunk = affected[start : start + BATCH]
        # Locked as a submission locks them, so a concurrent submission waits for this.
        rounds: dict[int, int] = {}
        for sample_id, review_round in (
            Slot.objects.select_for_update()
            .filter(sample_id__in=chunk, gold=False)
            .values_list("sample_id", "round")
        ):
            rounds[sample_id] = max(review_round, rounds.get(sample_id, 0))
        statuses = dict(Sample.objects.filter(pk__in=chunk).values_list("pk", "status"))
        adjudicated = set(
            Outcome.objects.filter(sample_id__in=chunk, adjudicated=True).values_list(
                "sample_id", flat=True
            )
        )
        counted = counted_reviews(dataset=dataset, sample_ids=chunk)
        for sample_id in chunk:
            status = statuses.get(sample_id)
            if status not in (*SETTLED, *QUEUED) or sample_id in adjudicated:
                continue
            n = counted.get(sample_id, 0)
            if n >= k:  # settled, or in review with k counted reviews again
                settle[sample_id] = rounds.get(sample_id, 0)
            elif status in SETTLED:
                moves[sample_id] = SampleStatus.IN_REVIEW if n else SampleStatus.PENDING_REVIEW
        # Back in review in its current round: no longer settled (the queue would otherwise
        # open a new round for it).
        Outcome.objects.filter(sample_id__in=[i for i in chunk if i in moves]).delete()
    for sample in annotation_selectors.samples_by_id(dataset=dataset, sample_ids=settle):
        # The settlement of a submission, on the reviews that count now (one per sample).
        sample_settle_round(sample=sample, review_round=settle[sample.pk], by=by)
    returned = 0
    if moves:
        returned = annotation_services.samples_move_in_review(
            dataset=dataset,
            moves=moves,
            by=by,
            reason=_("Back to review: fewer than %(k)d reviews count.") % {"k": k},
        ).changed
    if not returned:
        queue_sync(dataset=dataset)  # samples still in review get (or lose) their slots
    return Resettled(
        affected=len(affected),
        resettled=len(settle),
        returned=returned,
        left=len(affected) - len(settle) - returned,
    )


@transaction.atomic
def samples_send_to_adjudication(
    *, dataset: Dataset, sample_ids: Iterable[int], by: User, reason: str
) -> int:
    """Send samples to adjudication (their reviews stay): those verified, rejected or in
    review; adjudicated ones and those already waiting are left alone. The number sent."""
    ids = sorted(set(sample_ids))
    adjudicated = set(
        Outcome.objects.filter(sample_id__in=ids, adjudicated=True).values_list(
            "sample_id", flat=True
        )
    )
    movable = (SampleStatus.VERIFIED, SampleStatus.REJECTED, *QUEUED)
    wanted = [
        sample_id
        for sample_id, status in Sample.objects.filter(dataset=dataset, pk__in=ids).values_list(
            "pk", "status"
        )
        if status in movable and sample_id not in adjudicated
    ]
    if not wanted:
        return 0
    moved = annotation_services.samples_move_in_review(
        dataset=dataset,
        moves=dict.fromkeys(wanted, SampleStatus.NEEDS_ADJUDICATION),
        by=by,
        reason=reason,
    ).changed
    Outcome.objects.bulk_create(
        [
            Outcome(
                sample_id=sample_id,
                dataset=dataset,
                status=settling.NEEDS_ADJUDICATION,
                agreement=False,
                decided_at=timezone.now(),
            )
            for sample_id in wanted
        ],
        update_conflicts=True,
        unique_fields=["sample"],
        update_fields=["status", "agreement", "decided_at"],
    )
    return moved
