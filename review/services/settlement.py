"""Settling a sample on its round's counted reviews: the consensus, the status it reaches with
its history, the outcome, the review summary note and the round's open slots.

The caller holds the sample's slot locks. A bare status move (no edits to apply) on
PostgreSQL is one statement (``review.services.submit_sql.settle_write``); edits, SQLite, or a
status moved meanwhile take annotation's services and the ORM, step by step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import services as annotation_services
from annotation.formats.records import GOLD_KEY
from annotation.models import ChangeSource, NoteKey, Sample, SampleStatus
from review import editing, settling
from review.gold import services as gold_services
from review.models import Outcome, Review, ReviewerExclusion, Slot
from review.services import submit_sql
from review.values import current_values

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _counted_reviews(sample: Sample, review_round: int) -> list[submit_sql.Counted]:
    """The round's reviews of reviewers not excluded from the consensus, in one query."""
    excluded = ReviewerExclusion.objects.filter(dataset_id=sample.dataset_id)
    reviews = (
        Review.objects.filter(sample=sample, round=review_round)
        .exclude(reviewer__in=excluded.values("reviewer_id"))
        .select_related("reviewer")
        .only("decision", "values", "reject_reason", "reviewer__username")
    )
    return [
        submit_sql.Counted(r.reviewer.get_username(), r.decision, r.values, r.reject_reason)
        for r in reviews
    ]


def settle(
    *,
    sample: Sample,
    by: User | None,
    review_round: int,
    open_slots: bool = True,
    counted: Sequence[submit_sql.Counted] | None = None,
) -> str:
    """Settle the sample on its round's counted reviews (excluded reviewers' left out), read in
    one query unless the caller read them (``counted``, oldest first); ``open_slots`` False when
    the caller knows that no unfinished slot of the sample is left to delete."""
    if counted is None:
        counted = _counted_reviews(sample, review_round)
    names = [r.reviewer for r in counted]
    kind, current = sample.dataset.kind, current_values(sample)
    result = settling.consensus(
        [
            settling.Verdict(
                reviewer=r.reviewer,
                decision=r.decision,
                # Edits against the sample as it stands (reviews stored before edits were
                # kept alone hold every field; this reads them the same way).
                values=editing.edits(kind, current, r.values),
                reject_reason=r.reject_reason,
            )
            for r in counted
        ]
    )
    status = result.status
    if status == settling.VERIFIED:
        reason = _("Verified: %(names)s agreed.") % {"names": ", ".join(names)}
    elif status == settling.REJECTED:
        reason = _("Rejected by %(names)s (%(reasons)s).") % {
            "names": ", ".join(names),
            "reasons": ", ".join(result.reject_reasons),
        }
    else:
        reason = _("The reviewers disagree.")
    agreed = status != settling.NEEDS_ADJUDICATION
    if (
        submit_sql.in_one_statement()
        and not (status == settling.VERIFIED and result.values)
        and submit_sql.settle_write(
            sample=sample,
            by=by,
            settlement=submit_sql.Settlement(
                status=status,
                reason=reason,
                agreement=result.agreement and agreed,
                summary=_summary(names, agreement=True, adjudicated=False, note="")
                if agreed
                else None,
                delete_open_slots=open_slots,
            ),
        )
    ):
        _after(sample, status)
        return status
    if status == settling.VERIFIED:
        try:
            _move(sample, SampleStatus.VERIFIED, by, reason, result.values)
        except annotation_services.SampleInvalid:
            status = settling.NEEDS_ADJUDICATION
    elif status == settling.REJECTED:
        _move(sample, SampleStatus.REJECTED, by, reason)
    if status == settling.NEEDS_ADJUDICATION:
        _move(sample, SampleStatus.NEEDS_ADJUDICATION, by, _("The reviewers disagree."))
    # One upsert (the sample's review may be settled again after a re-import reopened it).
    Outcome.objects.bulk_create(
        [
            Outcome(
                sample=sample,
                dataset_id=sample.dataset_id,
                status=status,
                agreement=result.agreement and status != settling.NEEDS_ADJUDICATION,
                adjudicated=False,
                adjudicated_by=None,
                note="",
                decided_at=timezone.now(),
            )
        ],
        update_conflicts=True,
        unique_fields=["sample"],
        update_fields=[
            "status",
            "agreement",
            "adjudicated",
            "adjudicated_by",
            "note",
            "decided_at",
        ],
    )
    if status != settling.NEEDS_ADJUDICATION:
        write_summary(sample, names, agreement=True, adjudicated=False, note="")
    _after(sample, status)
    if open_slots:
        Slot.objects.filter(sample=sample, done=False, gold=False).delete()
    return status


def _after(sample: Sample, status: str) -> None:
    """A verified sample that an import flagged gold becomes a gold item."""
    if status == settling.VERIFIED and sample.extra.get(GOLD_KEY) is True:
        gold_services.gold_mark_flagged(dataset=sample.dataset, sample_ids=[sample.pk])


def _move(
    sample: Sample,
    status: str,
    by: User | None,
    reason: str,
    changes: Mapping[str, Any] | None = None,
) -> None:
    """Settle a sample's status with its history: label changes go through the full update
    (taxonomy check, new content hash); a bare status move is the two-statement step."""
    if changes:
        annotation_services.sample_update(
            sample=sample,
            changes=changes,
            by=by,
            source=ChangeSource.REVIEW,
            status=status,
            reason=reason,
        )
        return
    moved = annotation_services.sample_advance_status(
        sample=sample,
        from_status=sample.status,
        to_status=status,
        by=by,
        source=ChangeSource.REVIEW,
        reason=reason,
    )
    if not moved:  # changed since this request loaded it: let the full update decide
        annotation_services.sample_update(
            sample=sample,
            changes={},
            by=by,
            source=ChangeSource.REVIEW,
            status=status,
            reason=reason,
        )


def _summary(
    reviewers: list[str], *, agreement: bool, adjudicated: bool, note: str
) -> dict[str, Any]:
    return {
        "reviewers": reviewers,
        "agreement": agreement,
        "adjudicated": adjudicated,
        "note": note,
    }


def write_summary(
    sample: Sample, reviewers: list[str], *, agreement: bool, adjudicated: bool, note: str
) -> None:
    # The sample's slots (or the sample) are locked by the caller: it exists.
    annotation_services.sample_set_note(
        known_to_exist=True,
        sample_ids=[sample.pk],
        key=NoteKey.REVIEW_SUMMARY,
        values={
            sample.pk: _summary(reviewers, agreement=agreement, adjudicated=adjudicated, note=note)
        },
    )
