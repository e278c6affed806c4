"""The review queue: per-dataset settings, the k slots of each sample, claims, skips, releases.

A claim is one statement (``review.queue.statements.CLAIM``): it renews the reviewer's lease or
locks the next claimable slot with ``FOR UPDATE SKIP LOCKED`` and leases it, so concurrent
reviewers never wait on each other nor take the same slot.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Case, Exists, F, OuterRef, QuerySet, When
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import selectors as annotation_selectors
from annotation.models import Dataset, Sample, SampleStatus
from annotation.selectors import SampleCard
from core.leases import (
    DEFAULT_LEASE_SECONDS,
    OPEN_SINCE,
    claim_retrying,
    claim_row,
    lease_seconds_valid,
)
from core.lookups import AnyOf
from core.roles import is_lead
from review.gold import services as gold_services
from review.models import Outcome, ReviewerExclusion, ReviewSettings, Skip, Slot
from review.queue import assignments, statements
from review.selectors import review_settings_get
from review.services.reviews import sample_settle_round

if TYPE_CHECKING:
    from django.contrib.auth.models import User

QUEUED_STATUSES = (SampleStatus.PENDING_REVIEW, SampleStatus.IN_REVIEW)
_DEFAULT_GOLD_RATE: float = ReviewSettings.DEFAULT_GOLD_RATE


@dataclass(frozen=True)
class Lease:
    slot_id: int
    sample_id: int
    dataset_id: int
    expires_at: dt.datetime
    resumed: bool
    # A gold item's slot: the claim output and the workbench show it as any sample in review.
    gold: bool = False


def review_settings_update(
    *,
    dataset: Dataset,
    overlap: int,
    blind: bool,
    show_judge_hints: bool,
    lease_seconds: int,
    gold_rate: float | None = None,
    gold_feedback: bool | None = None,
    min_gold_accuracy: float | None = None,
    min_gold_items: int | None = None,
) -> ReviewSettings:
    """Save a dataset's review settings; a changed overlap resizes an open queue. The gold
    rate and feedback, and the thresholds that flag a reviewer, are kept when not given."""
    if not 1 <= overlap <= 10:
        raise ValidationError(
            {"overlap": _("Between 1 and 10 reviews per sample.")}, code="bad_overlap"
        )
    if not lease_seconds_valid(lease_seconds):
        raise ValidationError(
            {"lease_seconds": _("A lease lasts between 30 seconds and a week.")},
            code="bad_lease",
        )
    if gold_rate is not None and not 0 <= gold_rate <= 0.5:
        raise ValidationError(
            {"gold_rate": _("The gold rate is between 0 and 0.5 (0 turns gold items off).")},
            code="bad_gold_rate",
        )
    if min_gold_accuracy is not None and not 0 <= min_gold_accuracy <= 1:
        raise ValidationError(
            {"min_gold_accuracy": _("The minimum gold accuracy is between 0 and 1.")},
            code="bad_min_gold_accuracy",
        )
    if min_gold_items is not None and not 1 <= min_gold_items <= 100_000:
        raise ValidationError(
            {"min_gold_items": _("Flag reviewers after between 1 and 100,000 gold items.")},
            code="bad_min_gold_items",
        )
    with transaction.atomic():
        current = review_settings_get(dataset=dataset)
        resized = current.pk is not None and current.overlap != overlap
        current.overlap = overlap
        current.blind = blind
        current.show_judge_hints = show_judge_hints
        current.lease_seconds = lease_seconds
        if gold_rate is not None:
            current.gold_rate = gold_rate
        if gold_feedback is not None:
            current.gold_feedback = gold_feedback
        if min_gold_accuracy is not None:
            current.min_gold_accuracy = min_gold_accuracy
        if min_gold_items is not None:
            current.min_gold_items = min_gold_items
        current.save()
        if resized and Slot.objects.filter(dataset=dataset).exists():
            queue_sync(dataset=dataset)
    return current


@transaction.atomic
def queue_sync(
    *, dataset: Dataset, batch_size: int = 5000, sample_ids: Sequence[int] | None = None
) -> int:
    """Give every sample awaiting review its k slots and refresh the queue order.

    Creates missing slots, removes open slots beyond k (never a leased or filled one) and the
    unfinished slots of samples no longer awaiting review (taken down), and copies each
    sample's ``judges_disagree`` and ``priority`` onto its open slots. A sample back in review
    after it was settled (a re-import changed it) gets k slots in a new round. Safe to run any
    number of times. Returns the number of slots created.

    ``sample_ids`` limits all of it to those samples (what an import or a bulk action
    changed): its cost follows them, not the dataset, and none costs no statement.
    """
    if sample_ids is not None:
        sample_ids = sorted(set(sample_ids))
        if not sample_ids:
            return 0
    review_settings = review_settings_get(dataset=dataset)
    if review_settings.pk is None:
        review_settings.save()  # an open queue keeps the settings it was opened with
    k = review_settings.overlap
    samples = annotation_selectors.sample_list(dataset=dataset)
    slots = Slot.objects.filter(dataset=dataset, gold=False)
    outcomes = Outcome.objects.filter(dataset=dataset)
    if sample_ids is not None:
        samples = samples.filter(AnyOf(F("pk"), sample_ids))
        slots = slots.filter(AnyOf(F("sample_id"), sample_ids))
        outcomes = outcomes.filter(AnyOf(F("sample_id"), sample_ids))
    queued = list(
        samples.filter(status__in=QUEUED_STATUSES).values_list(
            "id", "judges_disagree", "priority", "status"
        )
    )
    # A sample no judge voted on (null) is served as one the judges agree on.
    order = {sample_id: (bool(disagree), priority) for sample_id, disagree, priority, _s in queued}
    in_review = {sid for sid, *_rest, status in queued if status == SampleStatus.IN_REVIEW}
    settled = set(outcomes.values_list("sample_id", flat=True))
    excluded = ReviewerExclusion.objects.filter(
        dataset=dataset, reviewer_id=OuterRef("reviewer_id")
    )
    rounds: dict[int, int] = {}  # sample -> its latest round
    latest: dict[int, list[Any]] = {}  # sample -> the slots of its latest round
    stale: list[Slot] = []
    for slot in (
        slots.only(
            "id",
            "sample_id",
            "round",
            "position",
            "judges_disagree",
            "priority",
            "done",
            "reviewer_id",
        )
        .annotate(excluded=Exists(excluded))
        .order_by("sample_id", "round")
    ):
        if slot.round != rounds.get(slot.sample_id):
            rounds[slot.sample_id], latest[slot.sample_id] = slot.round, []
        latest[slot.sample_id].append(slot)
        wanted = order.get(slot.sample_id)
        if wanted and not slot.done and (slot.judges_disagree, slot.priority) != wanted:
            slot.judges_disagree, slot.priority = wanted
            stale.append(slot)
    Slot.objects.bulk_update(stale, ["judges_disagree", "priority"], batch_size=batch_size)
    # A round needs k counted reviews: one more slot for each review of an excluded reviewer.
    needed = {sid: k + sum(s.done and s.excluded for s in slots) for sid, slots in latest.items()}
    existing = {sid: {s.position for s in slots} for sid, slots in latest.items()}
    surplus = [
        s.pk
        for sid, slots in latest.items()
        for s in slots
        if not s.done and s.reviewer_id is None and s.position >= needed[sid]
    ]
    for start in range(0, len(surplus), batch_size):
        Slot.objects.filter(pk__in=surplus[start : start + batch_size]).delete()
    dropped = set(surplus)
    open_slots = {
        sid: sum(not s.done and s.pk not in dropped for s in slots) for sid, slots in latest.items()
    }
    counted = {sid: sum(s.done and not s.excluded for s in slots) for sid, slots in latest.items()}
    _drop_slots_of_samples_out_of_review(dataset, samples)
    # A smaller k (or a reviewer counted again) can leave a sample in review with its k
    # counted reviews and no open slot: settle it.
    finished = [sid for sid in in_review if open_slots.get(sid) == 0 and counted.get(sid, 0) >= k]
    for sample in annotation_selectors.samples_by_id(dataset=dataset, sample_ids=finished):
        sample_settle_round(sample=sample, review_round=rounds[sample.pk], by=None)
        order.pop(sample.pk)
    for sample_id in order.keys() & settled:
        if sample_id in rounds and not open_slots[sample_id]:
            rounds[sample_id] += 1  # reopened after settling: a new round of k reviews
            existing[sample_id], needed[sample_id] = set(), k
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
        for position in range(needed.get(sample_id, k))
        if position not in existing.get(sample_id, ())
    ]
    Slot.objects.bulk_create(new, batch_size=batch_size)
    # New slots and rounds, samples out of review, reviewers counted again: the reservations
    # of assigned samples follow (and any left by concurrent claims is repaired).
    assignments.assignments_refresh(dataset_id=dataset.pk, sample_ids=sample_ids)
    return len(new)


def _drop_slots_of_samples_out_of_review(dataset: Dataset, samples: QuerySet[Sample]) -> None:
    """A sample that left review (taken down) keeps no unfinished slot: nobody is served it.
    Gold slots are not the queue's: a gold item's sample is out of review by design."""
    out = samples.exclude(status__in=QUEUED_STATUSES)
    Slot.objects.filter(
        dataset=dataset, done=False, gold=False, sample_id__in=out.values("pk")
    ).delete()


def slot_claim(
    *,
    dataset: Dataset,
    reviewer: User,
    skipped: bool = False,
    sample_id: int | None = None,
    now: dt.datetime | None = None,
    rng: random.Random | None = None,
) -> Lease | None:
    """Lease the next sample this reviewer has not reviewed and that still needs reviews.

    A reviewer holding an unfinished lease in the dataset gets it back (renewed), so a reload
    or a double click never takes a second sample. ``skipped`` serves the samples they skipped
    instead of the fresh ones; ``sample_id`` asks for one sample (a lease held on another is
    given back first). None when nothing is left, or the reviewer may not see the dataset.

    A fresh "next" claim serves a gold item instead, with the probability of the dataset's
    gold rate drawn from ``rng`` (a test passes a seeded one), when one is left for this
    reviewer; the slot just taken goes back to the queue.
    """
    leased = slot_claim_card(
        dataset_id=dataset.pk,
        reviewer=reviewer,
        skipped=skipped,
        sample_id=sample_id,
        now=now,
        rng=rng,
    )
    return None if leased is None else leased.lease


@dataclass(frozen=True)
class LeasedCard:
    """A lease with what the claim's answer shows of its sample: the dataset's kind, the
    sample's card (``annotation.selectors.SampleCard``)."""

    lease: Lease
    card: SampleCard


def slot_claim_card(
    *,
    dataset_id: int,
    reviewer: User,
    skipped: bool = False,
    sample_id: int | None = None,
    now: dt.datetime | None = None,
    rng: random.Random | None = None,
) -> LeasedCard | None:
    """``slot_claim`` with the leased sample's card, read in the claim's statement. None when
    nothing was leased: nothing is left, or the reviewer may not see the dataset (the caller
    tells the two apart). A gold item drawn instead is read in one more statement."""
    at = now or timezone.now()
    if sample_id is not None:
        held = Slot.objects.filter(dataset_id=dataset_id, reviewer=reviewer, done=False)
        for slot_id in held.exclude(sample_id=sample_id).values_list("pk", flat=True):
            _free(slot_id)
    params = statements.claim_params(
        dataset_id=dataset_id,
        reviewer_id=reviewer.pk,
        lead=is_lead(reviewer),
        now=at,
        skipped=skipped,
        sample_id=sample_id,
        default_lease_seconds=DEFAULT_LEASE_SECONDS,
        default_gold_rate=_DEFAULT_GOLD_RATE,
    )
    row = claim_retrying(lambda: claim_row(statements.CLAIM, params))
    if row is None:
        return None
    slot_id, leased_sample, expires_at, resumed, gold, gold_rate, card, assigned = row
    lease = Lease(slot_id, leased_sample, dataset_id, expires_at, resumed=resumed, gold=gold)
    if not skipped and sample_id is None:
        served = _gold_instead(
            lease=lease, gold_rate=float(gold_rate), reviewer=reviewer, now=at, rng=rng
        )
        if served is not lease:
            if assigned:  # the assigned sample the claim served was given back for gold
                assignments.assignments_refresh(
                    dataset_id=dataset_id, sample_ids=[leased_sample], reviewer_id=reviewer.pk
                )
            return leased_card(lease=served)
    return LeasedCard(lease, annotation_selectors.sample_card_from(card))


def leased_card(*, lease: Lease) -> LeasedCard:
    """The lease with its sample's card read in one statement (a gold item served instead of
    the slot the claim took)."""
    card = annotation_selectors.sample_card(sample_id=lease.sample_id)
    if card is None:  # pragma: no cover - a leased sample's slots go with it
        raise Slot.DoesNotExist(lease.sample_id)
    return LeasedCard(lease, card)


def _gold_instead(
    *, lease: Lease, gold_rate: float, reviewer: User, now: dt.datetime, rng: random.Random | None
) -> Lease:
    """A fresh lease, or a gold item's served instead with the probability of the dataset's
    gold rate when one is left for this reviewer (the fresh slot then goes back)."""
    if lease.resumed or gold_rate <= 0:
        return lease
    if (rng or gold_services.default_rng()).random() >= gold_rate:
        return lease
    return _claim_gold(lease=lease, reviewer=reviewer, now=now, rng=rng) or lease


def _claim_gold(
    *, lease: Lease, reviewer: User, now: dt.datetime, rng: random.Random | None
) -> Lease | None:
    """Swap the fresh lease for a gold slot of a gold item this reviewer was never served;
    None (keeping the lease) when none is left for them."""
    candidates = gold_services.gold_candidates(
        dataset_id=lease.dataset_id, reviewer=reviewer, besides=lease.sample_id
    )
    if not candidates:
        return None
    sample_id = (rng or gold_services.default_rng()).choice(candidates)
    try:
        with transaction.atomic():
            _free(lease.slot_id)
            slot = Slot.objects.create(
                dataset_id=lease.dataset_id,
                sample_id=sample_id,
                round=0,
                position=0,
                reviewer=reviewer,
                leased_at=now,
                lease_expires_at=lease.expires_at,
                gold=True,
            )
    except IntegrityError:  # a concurrent claim of the same reviewer: keep the normal lease
        return None
    return Lease(slot.pk, sample_id, lease.dataset_id, lease.expires_at, resumed=False, gold=True)


def _free(slot_id: int) -> None:
    """Give an unfinished slot back to the queue; a gold slot is done instead (its reviewer
    saw the gold item, so it is never served to them again, nor to anyone else)."""
    Slot.objects.filter(pk=slot_id, done=False).update(
        reviewer=Case(When(gold=True, then=F("reviewer")), default=None),
        leased_at=Case(When(gold=True, then=F("leased_at")), default=None),
        lease_expires_at=Case(When(gold=True, then=F("lease_expires_at")), default=OPEN_SINCE),
        done=F("gold"),
    )


@transaction.atomic
def slot_release(*, sample: Sample, reviewer: User) -> bool:
    """Give back a reviewer's unfinished lease on a sample; True when there was one."""
    held = Slot.objects.filter(sample=sample, reviewer=reviewer, done=False).first()
    if held is None:
        return False
    _free(held.pk)
    # Given back, an assigned sample is theirs again (a skip then closes their assignment).
    assignments.assignments_refresh(
        dataset_id=sample.dataset_id, sample_ids=[sample.pk], reviewer_id=reviewer.pk
    )
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
    # A gold item set aside is done with: never served again nor listed among the reviewer's
    # skips, its skip is kept for their skip rate only.
    gold = Slot.objects.filter(sample=sample, reviewer=reviewer, gold=True, done=False).exists()
    skip, _created = Skip.objects.update_or_create(
        sample=sample,
        reviewer=reviewer,
        defaults={"reason": reason, "dataset_id": sample.dataset_id, "gold": gold},
    )
    if not slot_release(sample=sample, reviewer=reviewer):
        assignments.assignments_refresh(
            dataset_id=sample.dataset_id, sample_ids=[sample.pk], reviewer_id=reviewer.pk
        )
    return skip
