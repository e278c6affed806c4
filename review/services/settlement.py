"""Settling a sample on its round's counted reviews: the consensus, the status it reaches with
its history, the outcome, the review summary note and the round's open slots.

The caller holds the sample's slot locks. The settlement's writes are one statement
(``review.services.submit_sql.SETTLE``); a verified sample whose reviewers agreed on edits
first has them applied by annotation's ``sample_update`` (taxonomy check, content hash,
history), which also moves its status, and so does a sample whose status moved meanwhile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext as _

from annotation import services as annotation_services
from annotation.formats.records import GOLD_KEY
from annotation.models import ChangeSource, NoteKey, Sample
from review import editing, settling
from review.gold import services as gold_services
from review.services import submit_sql
from review.values import current_values

if TYPE_CHECKING:
    from django.contrib.auth.models import User


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
        counted = submit_sql.counted_reviews(sample_id=sample.pk, review_round=review_round)
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
    moved = False
    if status == settling.VERIFIED and result.values:
        try:
            _update(sample, status, by, reason, result.values)
            moved = True
        except annotation_services.SampleInvalid:
            status, reason = settling.NEEDS_ADJUDICATION, _("The reviewers disagree.")
    agreed = status != settling.NEEDS_ADJUDICATION
    settlement = submit_sql.Settlement(
        from_status=sample.status,
        to_status=status,
        reason=reason,
        agreement=result.agreement and agreed,
        summary=_summary(names, agreement=True, adjudicated=False, note="") if agreed else None,
        close_open_slots=open_slots,
        step=not moved,
    )
    settled = _write(sample, by, settlement)
    if not settled.written:
        # The sample left the status it was read in (a lead took it down meanwhile): its
        # status is set by the full update, then the rest is written.
        _update(sample, status, by, reason)
        settled = _write(sample, by, dataclasses.replace(settlement, step=False))
    if settled.revision is not None:
        sample.status, sample.revision = status, settled.revision
    if status == settling.VERIFIED and sample.extra.get(GOLD_KEY) is True:
        # A verified sample that an import flagged gold becomes a gold item.
        gold_services.gold_mark_flagged(dataset=sample.dataset, sample_ids=[sample.pk])
    return status


def _write(
    sample: Sample, by: User | None, settlement: submit_sql.Settlement
) -> submit_sql.Settled:
    return submit_sql.settle_write(
        sample_id=sample.pk,
        dataset_id=sample.dataset_id,
        by_id=by.pk if by is not None else None,
        settlement=settlement,
    )


def _update(
    sample: Sample,
    status: str,
    by: User | None,
    reason: str,
    changes: Mapping[str, Any] | None = None,
) -> None:
    """Settle a sample's status, with its label changes, through the full update (taxonomy
    check, new content hash, history)."""
    annotation_services.sample_update(
        sample=sample,
        changes=dict(changes or {}),
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
    annotation_services.sample_set_note(
        sample_ids=[sample.pk],
        key=NoteKey.REVIEW_SUMMARY,
        values={
            sample.pk: _summary(reviewers, agreement=agreement, adjudicated=adjudicated, note=note)
        },
    )
