"""Reviews and what follows them: drafts, comments, submission, consensus and adjudication.

A submission is idempotent on its client-generated UUID and locks the slots of its sample, so
the k-th review of a sample is seen by exactly one transaction, which settles the sample.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import selectors as annotation_selectors
from annotation import services as annotation_services
from annotation.models import ChangeSource, Sample, SampleStatus
from core.leases import OPEN_SINCE
from core.roles import ANNOTATOR, is_lead
from review.gold import services as gold_services
from review.models import (
    Comment,
    Decision,
    Draft,
    GoldAnswer,
    Outcome,
    RejectReason,
    Review,
    ReviewSettings,
    Slot,
)
from review.selectors import AMENDABLE_STATUSES
from review.services import settlement, submit_sql
from review.values import review_fields_checked, verified_values_checked

if TYPE_CHECKING:
    from django.contrib.auth.models import User

MAX_DRAFT_BYTES = 64 * 1024
MAX_SECONDS = 24 * 3600.0


class ReviewConflict(ValidationError):
    """The review cannot be taken: the reviewer already reviewed the sample, or it needs no
    more reviews (their lease expired and others filled the slots)."""


class Verdict(TypedDict, total=False):
    """What a reviewer says of a sample besides the decision (every part optional)."""

    values: Mapping[str, Any] | None
    reject_reason: str
    clarity: int | None
    naturalness: int | None
    image_aligned: bool | None
    audio_aligned: bool | None
    note: str
    seconds_spent: float


def _verdict_fields(sample: Sample, decision: str, verdict: Verdict) -> dict[str, Any]:
    """The checked review fields of a verdict; ``seconds_spent`` is clamped to [0, MAX]."""
    clarity = verdict.get("clarity")
    naturalness = verdict.get("naturalness")
    checked = review_fields_checked(
        sample=sample,
        decision=decision,
        values=verdict.get("values"),
        reject_reason=verdict.get("reject_reason", ""),
        clarity=clarity,
        naturalness=naturalness,
    )
    return {
        **checked,
        "clarity": clarity,
        "naturalness": naturalness,
        "image_aligned": verdict.get("image_aligned"),
        "audio_aligned": verdict.get("audio_aligned"),
        "note": verdict.get("note", "").strip(),
        "seconds_spent": min(max(float(verdict.get("seconds_spent", 0.0)), 0.0), MAX_SECONDS),
    }


@dataclass(frozen=True)
class SubmitResult:
    review: Review | GoldAnswer  # a gold answer has a review's fields
    created: bool
    settled_status: str | None


def review_submit(
    *,
    reviewer: User,
    sample: Sample,
    client_uuid: uuid.UUID,
    decision: str,
    **verdict: Unpack[Verdict],
) -> SubmitResult:
    """Record a reviewer's verdict on a sample they hold (or can still take) a slot of.

    ``values`` may hold every reviewable field; only those that differ from the sample are
    kept as the reviewer's edits. The same ``client_uuid`` returns the first review instead
    of making a second. When the sample has its k reviews it is settled: verified with the
    agreed edits, rejected when every reviewer rejected it, or sent to adjudication.
    """
    fields = _verdict_fields(sample, decision, verdict)
    with transaction.atomic():
        locks = submit_sql.slots_lock(
            sample_id=sample.pk, reviewer_id=reviewer.pk, client_uuid=client_uuid
        )
        return _submit_locked(
            reviewer=reviewer,
            sample=sample,
            locks=locks,
            fields={"client_uuid": client_uuid, **fields},
        )


def review_submit_visible(
    *,
    reviewer: User,
    sample_id: int,
    client_uuid: uuid.UUID,
    decision: str,
    **verdict: Unpack[Verdict],
) -> SubmitResult | None:
    """:func:`review_submit` on a sample given by its id; None when the reviewer may not
    review in the sample's dataset. The sample is read by the slot lock's statement."""
    if not annotation_selectors.role_held(user=reviewer, role=ANNOTATOR):
        return None
    if not annotation_selectors.BIGINT_MIN <= sample_id <= annotation_selectors.BIGINT_MAX:
        return None
    with transaction.atomic():
        locks = submit_sql.slots_lock(
            sample_id=sample_id,
            reviewer_id=reviewer.pk,
            client_uuid=client_uuid,
            read_sample=True,
            lead=is_lead(reviewer),
        )
        sample = annotation_selectors.sample_from_visible(locks.sample_json)
        if sample is None:
            return None
        fields = _verdict_fields(sample, decision, verdict)
        return _submit_locked(
            reviewer=reviewer,
            sample=sample,
            locks=locks,
            fields={"client_uuid": client_uuid, **fields},
        )


@transaction.atomic
def review_amend(
    *,
    reviewer: User,
    review: Review,
    decision: str,
    **verdict: Unpack[Verdict],
) -> Review:
    """Change one's own review while its sample waits for the other reviews of its round.

    The slots of the sample are locked as a submission locks them, so an amendment and the
    review that settles the sample never interleave: once settled, the review is final.
    """
    if review.reviewer_id != reviewer.pk:
        raise ReviewConflict(_("This is not your review."), code="not_yours")
    rounds = list(
        Slot.objects.select_for_update()
        .filter(sample_id=review.sample_id, gold=False)
        .values_list("round", flat=True)
    )
    sample = Sample.objects.select_related("dataset").get(pk=review.sample_id)
    if sample.status not in AMENDABLE_STATUSES or max(rounds, default=0) != review.round:
        raise ReviewConflict(
            _("This sample is settled; your review can no longer be changed."), code="settled"
        )
    fields = _verdict_fields(sample, decision, verdict)
    fields["seconds_spent"] = min(review.seconds_spent + fields["seconds_spent"], MAX_SECONDS)
    for name, value in fields.items():
        setattr(review, name, value)
    review.save()
    Draft.objects.filter(sample=sample, reviewer=reviewer).delete()
    return review


def _replayed(reviewer: User, sample: Sample, client_uuid: uuid.UUID) -> Review | None:
    earlier = Review.objects.filter(client_uuid=client_uuid).first()
    if earlier is None:
        return None
    if earlier.reviewer_id != reviewer.pk or earlier.sample_id != sample.pk:
        raise ReviewConflict(_("This submission id was already used."), code="uuid_reused")
    return earlier


def _submit_locked(
    *, reviewer: User, sample: Sample, locks: submit_sql.Locks, fields: dict[str, Any]
) -> SubmitResult:
    """The submission in a fixed number of statements, after the lock of the sample's slots
    (``locks``), which reads along the overlap, whether this submission id was seen and whether
    the reviewer holds a draft or a skip of the sample: the review's writes and, when it
    settles the sample, the settlement's (``review.services.submit_sql``)."""
    # Locking every slot of the sample serialises its submissions: the last one settles it,
    # and a retry of the same submission waits at the lock, then finds the first one.
    gold = next((s for s in locks.slots if s.gold and s.reviewer_id == reviewer.pk), None)
    if gold is not None:
        # Served as a gold item: the answer is held against the expected one, and the
        # sample's reviews, status and outcome are left as they are.
        try:
            answer, created = gold_services.gold_answer_record(
                slot_id=gold.id, done=gold.done, reviewer=reviewer, sample=sample, fields=fields
            )
        except ValidationError as exc:
            raise ReviewConflict(exc.messages[0], code=exc.code) from exc
        if locks.has_draft:
            Draft.objects.filter(sample=sample, reviewer=reviewer).delete()
        return SubmitResult(answer, created=created, settled_status=None)
    every_round = [s for s in locks.slots if not s.gold]
    current = max((s.round for s in every_round), default=0)
    slots = [s for s in every_round if s.round == current]
    mine_done = any(s.reviewer_id == reviewer.pk and s.done for s in slots)
    # The lock may have waited for the first copy of this submission, whose review the
    # statement's snapshot cannot see but whose done slot it can: look again then.
    if mine_done or locks.replayed:
        earlier = _replayed(reviewer, sample, fields["client_uuid"])
        if earlier is not None:
            return SubmitResult(earlier, created=False, settled_status=None)
    now = timezone.now()
    if mine_done:
        raise ReviewConflict(_("You already reviewed this sample."), code="already_reviewed")
    slot = next((s for s in slots if s.reviewer_id == reviewer.pk and not s.done), None)
    if slot is None:
        # The lease expired; the work is kept if a slot is still free.
        slot = next((s for s in slots if not s.done and s.lease_expires_at < now), None)
    if slot is None:
        raise ReviewConflict(
            _("This sample needs no more reviews; your draft is kept."), code="no_slot"
        )
    # Reviews of reviewers excluded from consensus (``review.exclusions.services``) fill
    # their slot but do not count towards k; the last open slot filled by one is replaced.
    done = (not locks.me_excluded) + sum(1 for s in slots if s.done and not s.excluded)
    k: int = locks.overlap or ReviewSettings().overlap
    settles = done >= k
    replaces = not settles and locks.me_excluded and all(s.done for s in slots if s.id != slot.id)
    steps = not settles and not replaces and sample.status == SampleStatus.PENDING_REVIEW
    leased_at = slot.leased_at if slot.reviewer_id == reviewer.pk else None
    written = submit_sql.review_write(
        slot=slot,
        sample_id=sample.pk,
        dataset_id=sample.dataset_id,
        reviewer_id=reviewer.pk,
        fields=fields,
        leased_at=leased_at,
        now=now,
        drop_draft=locks.has_draft,
        drop_skip=locks.has_skip,
        first_step_reason=_("First review submitted.") if steps else None,
        read_round=settles,
    )
    if written.revision is not None:
        sample.status, sample.revision, sample.updated_at = (
            SampleStatus.IN_REVIEW,
            written.revision,
            now,
        )
    if written.status is not None:
        sample.status = written.status
    review = Review(
        id=written.review_id,
        slot_id=slot.id,
        sample=sample,
        dataset_id=sample.dataset_id,
        reviewer=reviewer,
        round=slot.round,
        leased_at=leased_at,
        created_at=now,
        **fields,
    )
    settled = None
    if settles:
        counted = written.counted or []
        if not locks.me_excluded:
            mine = (fields["decision"], fields["values"], fields["reject_reason"])
            counted.append(submit_sql.Counted(reviewer.get_username(), *mine))
        # Open slots left (k was lowered meanwhile) go with the settlement.
        left_open = any(not s.done and s.id != slot.id for s in every_round)
        settled = settlement.settle(
            sample=sample, by=reviewer, review_round=current, open_slots=left_open, counted=counted
        )
    elif replaces:
        _open_replacement(sample=sample, slots=slots)
    return SubmitResult(review, created=True, settled_status=settled)


def _open_replacement(*, sample: Sample, slots: Sequence[submit_sql.LockedSlot]) -> None:
    """Open one more slot in the sample's round, after the last ones (which a lease may hold)."""
    Slot.objects.create(
        dataset_id=sample.dataset_id,
        sample=sample,
        round=slots[0].round,
        position=1 + max(s.position for s in slots),
        judges_disagree=slots[0].judges_disagree,
        priority=slots[0].priority,
        lease_expires_at=OPEN_SINCE,
    )


def sample_settle_round(*, sample: Sample, review_round: int, by: User | None) -> str:
    """Settle a sample on its round's reviews (the queue does so when a smaller k leaves a
    sample with all the reviews it now needs); returns the status it reached."""
    with transaction.atomic():
        list(Slot.objects.select_for_update().filter(sample=sample))
        return settlement.settle(sample=sample, by=by, review_round=review_round)


@transaction.atomic
def sample_adjudicate(
    *,
    sample: Sample,
    by: User,
    decision: str,
    note: str,
    values: Mapping[str, Any] | None = None,
    reject_reason: str = "",
) -> Outcome:
    """A lead sets a sample's final values (verified) or rejects it, with a note for history."""
    note = note.strip()
    if not note:
        raise ValidationError({"note": _("Explain the decision in a note.")}, code="no_note")
    if sample.status == SampleStatus.REMOVED:
        raise ValidationError(_("A removed sample cannot be adjudicated."), code="removed")
    if decision == Decision.ACCEPT:
        annotation_services.sample_update(
            sample=sample,
            changes=verified_values_checked(sample, values or {}),
            by=by,
            source=ChangeSource.ADJUDICATION,
            status=SampleStatus.VERIFIED,
            reason=note,
        )
        status = SampleStatus.VERIFIED
    elif decision == Decision.REJECT:
        if reject_reason not in RejectReason.values or not reject_reason:
            raise ValidationError({"reject_reason": _("A rejection needs a reason.")})
        annotation_services.sample_update(
            sample=sample,
            changes={},
            by=by,
            source=ChangeSource.ADJUDICATION,
            status=SampleStatus.REJECTED,
            reason=f"{reject_reason}: {note}",
        )
        status = SampleStatus.REJECTED
    else:
        raise ValidationError({"decision": _("Accept or reject.")}, code="bad_decision")
    earlier = Outcome.objects.filter(sample=sample).first()
    outcome, _created = Outcome.objects.update_or_create(
        sample=sample,
        defaults={
            "dataset_id": sample.dataset_id,
            "status": status,
            "agreement": earlier.agreement if earlier else False,
            "adjudicated": True,
            "adjudicated_by": by,
            "note": note,
        },
    )
    rows = list(
        Review.objects.filter(sample=sample)
        .order_by("created_at", "id")
        .values_list("round", "reviewer__username")
    )
    latest = max((r for r, _name in rows), default=0)
    reviewers = [name for r, name in rows if r == latest]
    settlement.write_summary(
        sample, reviewers, agreement=outcome.agreement, adjudicated=True, note=note
    )
    Slot.objects.filter(sample=sample, done=False, gold=False).delete()
    return outcome


def draft_save(*, sample: Sample, reviewer: User, payload: Mapping[str, Any]) -> Draft:
    """Keep the reviewer's unsaved form state for this sample (the last save wins)."""
    if len(json.dumps(payload)) > MAX_DRAFT_BYTES:
        raise ValidationError(_("The draft is too large."), code="draft_too_large")
    draft, _created = Draft.objects.update_or_create(
        sample=sample, reviewer=reviewer, defaults={"payload": dict(payload)}
    )
    return draft


def comment_create(*, sample: Sample, author: User, text: str) -> Comment:
    text = text.strip()
    if not text:
        raise ValidationError({"text": _("A comment cannot be empty.")}, code="empty")
    if len(text) > 5000:
        raise ValidationError({"text": _("Keep comments under 5,000 characters.")})
    return Comment.objects.create(sample=sample, author=author, text=text)
