"""Gold items: settled samples a lead vouches for, served to reviewers among their claims.

Only verified samples may be gold: they sit in no queue, so a gold item never takes a normal
review slot, and its expected answer is the one the reviews (or the lead's adjudication)
reached. A reviewer's answer to a gold item is a ``GoldAnswer``, never a ``Review``: it
counts towards no sample's k, never settles or reopens the sample, and never enters consensus
or outcomes.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils.translation import gettext as _

from annotation import selectors as annotation_selectors
from annotation.models import Dataset, Sample, SampleStatus
from review import editing
from review.models import Decision, GoldAnswer, GoldItem, RejectReason, Review, Skip, Slot
from review.values import current_values, edits_checked

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The statuses a gold item's sample may have: settled and out of every queue.
GOLD_STATUSES = (SampleStatus.VERIFIED,)
# Free text a reviewer may reword without being wrong: left out of the default expectation.
FREE_TEXT_FIELDS = frozenset({"explanation", "predicate"})
MAX_EXPLANATION = 5000
# The claim's random source for drawing gold; a test passes its own seeded one.
_rng = random.Random()  # noqa: S311 - sampling a queue, not a secret


def default_rng() -> random.Random:
    return _rng


def gold_fields(kind: str) -> tuple[str, ...]:
    """The reviewable fields a gold item checks unless the lead names others."""
    return tuple(f for f in editing.reviewable_fields(kind) if f not in FREE_TEXT_FIELDS)


def expected_checked(
    *, sample: Sample, expected: Mapping[str, Any] | None, fields: Iterable[str] | None = None
) -> dict[str, Any]:
    """The expected answer of a gold item: the sample's current values unless given, checked.

    ``expected`` may hold ``decision`` (accept by default), ``reject_reason`` and reviewable
    fields; for an acceptance the fields checked are those given, else ``fields``, else the
    dataset kind's label fields, each with the sample's value where none is given.
    """
    given = dict(expected or {})
    decision = given.pop("decision", Decision.ACCEPT)
    if decision not in Decision.values:
        raise ValidationError({"decision": _("Accept or reject.")}, code="bad_decision")
    reason = given.pop("reject_reason", "")
    if decision == Decision.REJECT:
        if reason and reason not in RejectReason.values:
            raise ValidationError(
                {"reject_reason": _("Unknown reject reason “%(value)s”.") % {"value": reason}},
                code="bad_reason",
            )
        if given:
            raise ValidationError(
                _("A gold item expected to be rejected takes no field values."), code="bad_values"
            )
        return {"decision": decision, **({"reject_reason": reason} if reason else {})}
    edits_checked(sample, given)  # unknown fields and values outside the taxonomy are refused
    kind = sample.dataset.kind
    names = list(given) or list(fields or gold_fields(kind))
    unknown = sorted(set(names) - set(editing.reviewable_fields(kind)))
    if unknown:
        raise ValidationError(
            _("“%(value)s” is not a field a reviewer may change.") % {"value": unknown[0]},
            code="unknown_field",
        )
    current = current_values(sample)
    values = editing.normalise_values(kind, {n: given.get(n, current[n]) for n in names})
    return {"decision": decision, **values}


def _check_markable(sample: Sample) -> None:
    if sample.status not in GOLD_STATUSES:
        raise ValidationError(
            _(
                "Only verified samples can be gold: “%(id)s” is %(status)s. Gold items are "
                "served outside the queue, so they must be settled first."
            )
            % {"id": sample.external_id, "status": sample.get_status_display()},
            code="not_verified",
        )


def gold_mark(
    *,
    sample: Sample,
    by: User | None,
    expected: Mapping[str, Any] | None = None,
    explanation: str = "",
    attention_check: bool = False,
) -> GoldItem:
    """Mark a verified sample as gold (or change its expected answer); returns the item."""
    _check_markable(sample)
    explanation = explanation.strip()
    if len(explanation) > MAX_EXPLANATION:
        raise ValidationError(
            {"explanation": _("Keep the explanation under 5,000 characters.")},
            code="too_long",
        )
    checked = expected_checked(sample=sample, expected=expected)
    item, _created = GoldItem.objects.update_or_create(
        sample=sample,
        defaults={
            "dataset_id": sample.dataset_id,
            "expected": checked,
            "explanation": explanation,
            "attention_check": attention_check,
            "created_by": by,
        },
    )
    return item


@dataclass(frozen=True)
class BulkGoldResult:
    marked: int
    refused: list[str]  # external ids of samples that are not verified
    unknown: list[int]  # ids that are no sample of the dataset


@transaction.atomic
def gold_mark_bulk(
    *, dataset: Dataset, sample_ids: Iterable[int], by: User | None, attention_check: bool = False
) -> BulkGoldResult:
    """Mark verified samples as gold with their current values as the expected answer;
    samples that are not verified are refused by name, the others marked. Samples already
    gold keep their item."""
    sample_ids = list(sample_ids)
    samples = list(annotation_selectors.samples_by_id(dataset=dataset, sample_ids=sample_ids))
    ids = set(sample_ids)
    unknown = sorted(ids - {s.pk for s in samples})
    taken = set(GoldItem.objects.filter(sample__in=samples).values_list("sample_id", flat=True))
    refused = [s.external_id for s in samples if s.status not in GOLD_STATUSES]
    new = [
        GoldItem(
            sample=s,
            dataset=dataset,
            expected=expected_checked(sample=s, expected=None),
            attention_check=attention_check,
            created_by=by,
        )
        for s in samples
        if s.status in GOLD_STATUSES and s.pk not in taken
    ]
    GoldItem.objects.bulk_create(new)
    return BulkGoldResult(marked=len(new), refused=refused, unknown=unknown)


@transaction.atomic
def gold_unmark(*, sample: Sample) -> bool:
    """The sample is gold no more: its item and the answers given to it go (their expected
    answer is no longer vouched for), and any lease on it ends. True when it was gold."""
    return _unmark([sample.pk]) > 0


def _unmark(sample_ids: list[int]) -> int:
    """Remove the gold items of these samples, their answers, gold slots (open leases first)
    and gold skips; the number of items removed."""
    Slot.objects.filter(sample_id__in=sample_ids, gold=True, done=False).delete()
    _deleted, counts = GoldItem.objects.filter(sample_id__in=sample_ids).delete()
    Slot.objects.filter(sample_id__in=sample_ids, gold=True).delete()
    Skip.objects.filter(sample_id__in=sample_ids, gold=True).delete()
    return counts.get(GoldItem._meta.label, 0)


@dataclass(frozen=True)
class BulkUnmarkResult:
    unmarked: int
    skipped: int  # chosen samples of the dataset that were no gold item


@transaction.atomic
def gold_unmark_bulk(*, dataset: Dataset, sample_ids: Iterable[int]) -> BulkUnmarkResult:
    """The chosen samples of the dataset are gold no more, as :func:`gold_unmark` does one:
    their items, the answers given to them and their gold slots go; the chosen samples that
    were no gold item are counted as skipped."""
    samples = annotation_selectors.samples_by_id(dataset=dataset, sample_ids=list(sample_ids))
    chosen = list(samples.values_list("pk", flat=True))
    unmarked = _unmark(chosen) if chosen else 0
    return BulkUnmarkResult(unmarked=unmarked, skipped=len(chosen) - unmarked)


def gold_mark_flagged(*, dataset: Dataset, sample_ids: Iterable[int] | None = None) -> int:
    """Make gold items of the verified samples that an import flagged ``gold`` (its key or
    column in this site's own formats), with their current values as the expected answer;
    called at the end of each import and when a flagged sample is verified. Returns how many."""
    flagged = annotation_selectors.sample_ids_flagged_gold(
        dataset=dataset, statuses=GOLD_STATUSES, sample_ids=sample_ids
    )
    if not flagged:
        return 0
    return gold_mark_bulk(dataset=dataset, sample_ids=flagged, by=None).marked


def gold_item_served(*, sample: Sample) -> bool:
    """Whether a gold item on this sample is served to reviewers now (its sample verified;
    a taken-down one is not, as :func:`gold_candidates` selects)."""
    return sample.status in GOLD_STATUSES


def dataset_has_gold(*, dataset: Dataset) -> bool:
    """Whether any sample of the dataset is a gold item."""
    return GoldItem.objects.filter(dataset=dataset).exists()


def gold_candidates(*, dataset_id: int, reviewer: User, besides: int | None) -> list[int]:
    """The gold samples this reviewer may still be served: never served to them before,
    never reviewed by them, and still verified; in sample order."""
    seen = Slot.objects.filter(sample=OuterRef("sample"), reviewer=reviewer, gold=True)
    reviewed = Review.objects.filter(sample=OuterRef("sample"), reviewer=reviewer)
    items = (
        GoldItem.objects.filter(dataset_id=dataset_id, sample__status__in=GOLD_STATUSES)
        .exclude(Exists(seen))
        .exclude(Exists(reviewed))
        .order_by("sample_id")
    )
    if besides is not None:
        items = items.exclude(sample_id=besides)
    return list(items.values_list("sample_id", flat=True))


def answer_matches(
    *, kind: str, expected: Mapping[str, Any], answer: Mapping[str, Any]
) -> dict[str, bool]:
    """Per key of the expected answer, whether the reviewer's answer holds the same value
    (text compared as the consensus compares it); fields of an answer that rejected an item
    expected to be accepted match nothing."""
    wanted = editing.normalise_values(kind, expected)
    given = editing.normalise_values(kind, answer)
    matches: dict[str, bool] = {}
    for key, value in expected.items():
        if key in ("decision", "reject_reason"):
            matches[key] = answer.get(key, "") == value
        else:
            matches[key] = answer.get("decision") == Decision.ACCEPT and given.get(
                key
            ) == wanted.get(key)
    return matches


def gold_answer_record(
    *, slot_id: int, done: bool, reviewer: User, sample: Sample, fields: dict[str, Any]
) -> tuple[GoldAnswer, bool]:
    """Record a reviewer's answer on their gold slot ``slot_id`` (``done``: it was filled
    already; inside the submission's transaction, with the sample's slots locked); the same
    ``client_uuid`` returns the first answer."""
    earlier = GoldAnswer.objects.filter(client_uuid=fields["client_uuid"]).first()
    if earlier is not None:
        if earlier.reviewer_id != reviewer.pk or earlier.sample_id != sample.pk:
            raise ValidationError(_("This submission id was already used."), code="uuid_reused")
        return earlier, False
    if done:
        raise ValidationError(_("You already reviewed this sample."), code="already_reviewed")
    item = GoldItem.objects.filter(sample=sample).first()
    if item is None:
        raise ValidationError(
            _("This sample needs no more reviews; your draft is kept."), code="no_slot"
        )
    kind = sample.dataset.kind
    answer = answer_of(kind=kind, sample=sample, fields=fields)
    matches = answer_matches(kind=kind, expected=item.expected, answer=answer)
    created = GoldAnswer.objects.create(
        gold_item=item,
        slot_id=slot_id,
        sample=sample,
        dataset_id=sample.dataset_id,
        reviewer=reviewer,
        answer=answer,
        matches=matches,
        matched=all(matches.values()),
        **fields,
    )
    Slot.objects.filter(pk=slot_id).update(done=True)
    return created, True


def answer_of(*, kind: str, sample: Sample, fields: Mapping[str, Any]) -> dict[str, Any]:
    """What a verdict amounts to, in the shape of an expected answer: the decision, and the
    reject reason or every reviewable value (the sample's, with the reviewer's edits)."""
    if fields["decision"] == Decision.REJECT:
        return {"decision": Decision.REJECT, "reject_reason": fields["reject_reason"]}
    values = current_values(sample) | dict(fields["values"])
    return {"decision": Decision.ACCEPT, **editing.normalise_values(kind, values)}
