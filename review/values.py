"""Checks of what a reviewer or a lead submits: the edits they made, against the taxonomy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from annotation import selectors as annotation_selectors
from annotation.models import Sample
from review import editing
from review.models import Decision, RejectReason


def _problem_errors(problems: list[editing.Problem]) -> dict[str, list[ValidationError]]:
    """Each problem's message under its field, with its code (core.api answers a value the
    taxonomy lacks with 404, a field of the other dataset kind with 409)."""
    wording = {
        "unknown_field": _("“%(value)s” is not a field a reviewer may change."),
        "other_kind_field": _("“%(value)s” is not a field of this dataset's samples."),
        "unknown_group": _("Unknown answerability group “%(value)s”."),
        "unknown_category": _("Unknown category “%(value)s”."),
        "category_not_in_group": _(
            "Category “%(value)s” does not belong to the chosen answerability group."
        ),
        "unknown_scenario": _("Unknown scenario “%(value)s”."),
        "unknown_safety_label": _("The label must be safe or unsafe, not “%(value)s”."),
        "unknown_safety_category": _("Unknown safety category “%(value)s”."),
        "unknown_safety_subcategory": _(
            "Subcategory “%(value)s” does not belong to the chosen safety category."
        ),
        "empty_predicate": _("An unsafe scenario needs at least one predicate condition."),
        "not_text": _("“%(value)s” must be text (the predicate a list of texts)."),
        "required": _("A verified sample needs a value here."),
    }
    errors: dict[str, list[ValidationError]] = {}
    for problem in problems:
        text = wording[problem.code] % {"value": problem.value}
        errors.setdefault(problem.field, []).append(ValidationError(text, code=problem.code))
    return errors


def current_values(sample: Sample) -> dict[str, Any]:
    return {name: getattr(sample, name) for name in editing.reviewable_fields(sample.dataset.kind)}


def _taxonomy(sample: Sample) -> editing.Taxonomy:
    view = annotation_selectors.taxonomy_view(sample.dataset)
    return editing.Taxonomy(
        groups=view.groups,
        categories=view.categories,
        scenarios=view.scenarios,
        safety_categories=view.safety_categories,
    )


def edits_checked(sample: Sample, values: Mapping[str, Any]) -> dict[str, Any]:
    """The fields the reviewer actually changed, checked against the taxonomy.

    A field not sent, or sent back as the sample holds it, is not an edit and is never
    written; a value outside the taxonomy that nobody touched is kept as it is.
    """
    kind = sample.dataset.kind
    unknown = sorted(set(values) - set(editing.reviewable_fields(kind)))
    if unknown:
        raise ValidationError(
            _problem_errors(
                [
                    editing.Problem(
                        f, "other_kind_field" if f in editing.ALL_FIELDS else "unknown_field", f
                    )
                    for f in unknown
                ]
            )
        )
    malformed = editing.malformed_values(kind, values)
    if malformed:
        raise ValidationError(_problem_errors(malformed))
    current = current_values(sample)
    changes = editing.edits(kind, current, values)
    if not changes:
        return {}
    problems = editing.check_values(kind, changes, current=current, taxonomy=_taxonomy(sample))
    if problems:
        raise ValidationError(_problem_errors(problems))
    return changes


def verified_values_checked(sample: Sample, values: Mapping[str, Any]) -> dict[str, Any]:
    """A lead's edits for a sample about to be verified (see ``edits_checked``), refused when
    the sample would lack a field a verified sample must have."""
    changes = edits_checked(sample, values)
    after = {**current_values(sample), **changes}
    missing = editing.missing_required(sample.dataset.kind, after, _taxonomy(sample))
    if missing:
        raise ValidationError(_problem_errors(missing))
    return changes


def _rating(name: str, value: int | None) -> int | None:
    if value is not None and not 1 <= value <= 5:
        raise ValidationError({name: _("Rate from 1 to 5.")}, code="bad_rating")
    return value


def review_fields_checked(
    *,
    sample: Sample,
    decision: str,
    values: Mapping[str, Any] | None,
    reject_reason: str,
    clarity: int | None,
    naturalness: int | None,
) -> dict[str, Any]:
    """A review's decision, edits and reason, checked: what submission and amendment store."""
    if decision not in Decision.values:
        raise ValidationError({"decision": _("Accept or reject.")}, code="bad_decision")
    if decision == Decision.REJECT:
        if reject_reason not in RejectReason.values or not reject_reason:
            raise ValidationError(
                {"reject_reason": _("A rejection needs a reason.")}, code="no_reason"
            )
        clean: dict[str, Any] = {}
    else:
        reject_reason = ""
        clean = edits_checked(sample, values or {})
    _rating("clarity", clarity)
    _rating("naturalness", naturalness)
    return {"decision": decision, "reject_reason": reject_reason, "values": clean}
