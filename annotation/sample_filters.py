"""The sample list's filter and bulk actions: one definition for the page and the API.

``SampleFilterSet`` (django-filter) declares every parameter once: the form field that reads
it (with the message for a value it cannot use) and the query it adds. ``SampleFilter`` is the
filter as a typed value: ``from_params`` reads it through the filter set's form and says what
it could not use, ``to_params`` writes it back (paging and bulk actions keep the filter; bulk
jobs store it), and ``annotation.selectors.samples_matching`` applies it through the filter set.

Parameters: ``search status category question_format scenario external_id judges_disagree
reviewer decision changed duplicates gold has_response response_model verdict score_min
score_max created_after created_before updated_after updated_before ordering``. Judge-derived
ones are for leads only, and so are gold items; other reviewers' work (``reviewer``,
``decision``) is hidden from non-leads in blind review (``SampleFilter.refused_for``).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import QueryDict
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation import extensions
from annotation.models import (
    DuplicatePair,
    JobStatus,
    Sample,
    SampleStatus,
    Snapshot,
    SnapshotEntry,
)
from core.roles import is_lead, sees_judge_votes

if TYPE_CHECKING:
    from annotation.models import Dataset


class BulkAction(models.TextChoices):
    """What a lead may do to a selection of the sample list."""

    SEND_TO_REVIEW = "send_to_review", gettext_lazy("Send to review")
    SET_PRIORITY = "set_priority", gettext_lazy("Set priority")
    TAKE_DOWN = "take_down", gettext_lazy("Take down")
    RESTORE = "restore", gettext_lazy("Restore")
    ASSIGN = "assign", gettext_lazy("Assign to annotators")
    UNASSIGN = "unassign", gettext_lazy("Unassign")


# Sort keys offered to users, and the columns each one orders by (id breaks ties).
ORDERINGS: dict[str, tuple[str, ...]] = {
    "id": ("id",),
    "external_id": ("external_id", "id"),
    "status": ("status", "id"),
    "category": ("category_code", "id"),
    "priority": ("priority", "id"),
    "updated": ("updated_at", "id"),
}
ORDERING_LABELS = {
    "id": gettext_lazy("Import order"),
    "external_id": gettext_lazy("External id"),
    "status": gettext_lazy("Status"),
    "category": gettext_lazy("Category"),
    "priority": gettext_lazy("Priority"),
    "updated": gettext_lazy("Last change"),
}
# A review's decision as the list filters it: an accept that changed nothing, an accept that
# corrected a field, a rejection; or a reviewer's skip.
DECISIONS = ("accept", "correct", "reject", "skip")
DECISION_LABELS = {
    "accept": gettext_lazy("Accepted"),
    "correct": gettext_lazy("Corrected"),
    "reject": gettext_lazy("Rejected"),
    "skip": gettext_lazy("Skipped by a reviewer"),
}
# The labels a judge's verdict holds (judging's): answerability, safety, or an abstention.
VERDICT_LABELS = ("answerable", "unanswerable", "abstain", "safe", "unsafe")
MAX_TEXT = 200
# The columns the search reads, in the order of their trigram index (annotation 0027).
SEARCH_COLUMNS = ("external_id", "question", "reference_answer", "speech_utterance")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class FilterError(ValueError):
    """Query parameters the filter cannot use, with a readable message per parameter."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in problems.items()))
        self.problems = problems


# --- form fields: what each parameter accepts, and what it says of a value it cannot use ---


class TextField(forms.CharField):
    """Trimmed text of at most MAX_TEXT characters."""

    def validate(self, value: Any) -> None:
        super().validate(value)
        if len(value) > MAX_TEXT:
            raise ValidationError(_("Keep it under %(n)d characters.") % {"n": MAX_TEXT})


class YesNoField(forms.Field):
    """true/false (1/0, yes/no, on/off); None when left out."""

    def to_python(self, value: Any) -> bool | None:
        raw = str(value or "").strip().lower()
        if raw in _TRUE:
            return True
        if raw in _FALSE:
            return False
        if raw:
            raise ValidationError(_("Use true or false."))
        return None


class OnField(YesNoField):
    """A switch: true, or off (false, or left out)."""

    def to_python(self, value: Any) -> bool:
        return bool(super().to_python(value))


class OneOfField(forms.Field):
    """One of ``known`` values; an unknown one is named with the values allowed."""

    def __init__(self, *, known: Sequence[str], message: Promise, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.known, self.message = tuple(known), message

    def to_python(self, value: Any) -> str:
        raw = str(value or "").strip()
        if raw and raw not in self.known:
            raise ValidationError(
                str(self.message) % {"value": raw, "known": ", ".join(self.known)}
            )
        return raw


class StatusesField(forms.Field):
    """One or more statuses: the parameter repeated, or its values separated by commas."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> tuple[str, ...]:
        items = value if isinstance(value, list | tuple) else [value or ""]
        statuses = [v.strip() for item in items for v in str(item).split(",") if v.strip()]
        unknown = [s for s in statuses if s not in SampleStatus.values]
        if unknown:
            raise ValidationError(
                _("Unknown status “%(status)s” (known: %(known)s).")
                % {"status": unknown[0], "known": ", ".join(SampleStatus.values)}
            )
        return tuple(dict.fromkeys(statuses))


class OrderingField(forms.Field):
    def to_python(self, value: Any) -> str:
        ordering = str(value or "").strip() or "id"
        if ordering.removeprefix("-") not in ORDERINGS:
            raise ValidationError(_("Sort by one of: %(known)s.") % {"known": ", ".join(ORDERINGS)})
        return ordering


class ScoreField(forms.FloatField):
    def __init__(self, **kwargs: Any) -> None:
        message = gettext_lazy("Use a number from 0 to 1.")
        kwargs["error_messages"] = {"invalid": message, "min_value": message, "max_value": message}
        super().__init__(min_value=0, max_value=1, **kwargs)


class DayField(forms.DateField):
    def __init__(self, **kwargs: Any) -> None:
        kwargs["error_messages"] = {"invalid": gettext_lazy("Use a date as YYYY-MM-DD.")}
        super().__init__(input_formats=["%Y-%m-%d"], **kwargs)


def _day_start(day: datetime.date) -> datetime.datetime:
    """Midnight at the start of ``day`` in the site's time zone."""
    return timezone.make_aware(datetime.datetime.combine(day, datetime.time.min))


class Param(django_filters.Filter):  # type: ignore[misc]
    """A parameter read by ``field_class`` (given ``extra`` field options) and applied by a
    method of the filter set (or by ``field_name`` = value)."""

    def __init__(self, field_class: type[forms.Field], **kwargs: Any) -> None:
        self.field_class = field_class
        super().__init__(**kwargs)


# --- the filter set ---------------------------------------------------------------------------


class SampleFilterSet(django_filters.FilterSet):  # type: ignore[misc]
    """Every parameter of the sample list, on the samples of one dataset (``dataset``).

    Each filter is one condition of a single statement (an indexed column of the sample, or an
    ``EXISTS`` over an index of the table that another app owns, through
    ``annotation.extensions``), so the list, its count and a bulk selection stay one query each.
    """

    search = Param(TextField, method="filter_search")
    status = Param(StatusesField, method="filter_status")
    category = Param(TextField, method="filter_category")
    question_format = Param(TextField, field_name="question_format")
    scenario = Param(TextField, field_name="scenario")
    external_id = Param(TextField, field_name="external_id")
    judges_disagree = Param(YesNoField, field_name="judges_disagree")
    reviewer = Param(TextField, method="filter_reviewer")
    decision = Param(
        OneOfField,
        method="filter_decision",
        known=DECISIONS,
        message=gettext_lazy("Unknown decision “%(value)s” (known: %(known)s)."),
    )
    changed = Param(OnField, method="filter_changed")
    duplicates = Param(YesNoField, method="filter_duplicates")
    gold = Param(YesNoField, method="filter_gold")
    has_response = Param(YesNoField, method="filter_has_response")
    response_model = Param(TextField, method="filter_response_model")
    verdict = Param(
        OneOfField,
        method="filter_verdict",
        known=VERDICT_LABELS,
        message=gettext_lazy("Unknown verdict “%(value)s” (known: %(known)s)."),
    )
    score_min = Param(ScoreField, method="filter_score")
    score_max = Param(ScoreField, method="filter_score")
    created_after = Param(DayField, field_name="created_at", method="after")
    created_before = Param(DayField, field_name="created_at", method="before")
    updated_after = Param(DayField, field_name="updated_at", method="after")
    updated_before = Param(DayField, field_name="updated_at", method="before")
    ordering = Param(OrderingField, method="filter_ordering")

    class Meta:
        model = Sample
        fields: list[str] = []

    def __init__(self, *args: Any, dataset: Dataset | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dataset = dataset

    def _dataset(self) -> Dataset:
        if self.dataset is None:
            raise TypeError("SampleFilterSet filters the samples of a dataset: pass dataset=")
        return self.dataset

    def _value(self, name: str) -> Any:
        return self.form.cleaned_data.get(name)

    def filter_search(self, samples: QuerySet[Sample], name: str, text: str) -> QuerySet[Sample]:
        # The external id, the question, the reference answer or the speech utterance (the
        # tri-modal "question"), case-insensitive: each on the trigram index of annotation 0027.
        condition = Q()
        for column in SEARCH_COLUMNS:
            condition |= Q(**{f"{column}__icontains": text})
        return samples.filter(condition)

    def filter_status(
        self, samples: QuerySet[Sample], name: str, statuses: tuple[str, ...]
    ) -> QuerySet[Sample]:
        return samples.filter(status__in=statuses)

    def filter_category(self, samples: QuerySet[Sample], name: str, code: str) -> QuerySet[Sample]:
        return samples.filter(Q(category_code=code) | Q(safety_category=code))

    def filter_reviewer(
        self, samples: QuerySet[Sample], name: str, username: str
    ) -> QuerySet[Sample]:
        if self._value("decision"):
            return samples  # the decision's filter asks for that reviewer's decisions
        reviewed = extensions.samples_reviewed_by(dataset=self._dataset(), username=username)
        return samples.none() if reviewed is None else samples.filter(pk__in=reviewed)

    def filter_decision(
        self, samples: QuerySet[Sample], name: str, decision: str
    ) -> QuerySet[Sample]:
        condition = extensions.sample_condition(
            extensions.REVIEW_DECISION,
            dataset=self._dataset(),
            decision=decision,
            username=self._value("reviewer") or None,
        )
        return samples.none() if condition is None else samples.filter(condition)

    def filter_changed(self, samples: QuerySet[Sample], name: str, on: bool) -> QuerySet[Sample]:
        # Changed since the last snapshot, or not in it: no entry of it with the same content.
        # The snapshot is looked up first: without one every sample is changed (no condition),
        # and with one the entries' probe is on a constant snapshot (its unique index).
        if not on:
            return samples
        last = _last_snapshot_id(self._dataset())
        if last is None:
            return samples
        return samples.exclude(Exists(_in_snapshot(last)))

    def filter_duplicates(
        self, samples: QuerySet[Sample], name: str, paired: bool
    ) -> QuerySet[Sample]:
        # Either side of a pair, as one IN over the union of both sides: a semi-join driven
        # by the (few) pairs, where an OR of two EXISTS would test every sample.
        pairs = DuplicatePair.objects.filter(dataset=self._dataset()).order_by()
        sides = pairs.values("sample_id").union(pairs.values("original_id"))
        return samples.filter(pk__in=sides) if paired else samples.exclude(pk__in=sides)

    def filter_gold(self, samples: QuerySet[Sample], name: str, gold: bool) -> QuerySet[Sample]:
        exists = extensions.gold_exists(dataset=self._dataset())
        if exists is None:  # nothing plugged in gold items: no sample is one
            return samples.none() if gold else samples
        return samples.filter(exists if gold else ~exists)

    def filter_has_response(
        self, samples: QuerySet[Sample], name: str, present: bool
    ) -> QuerySet[Sample]:
        exists = extensions.sample_condition(
            extensions.MODEL_RESPONSE, dataset=self._dataset(), model=None
        )
        if exists is None:
            return samples.none() if present else samples
        return samples.filter(exists if present else ~exists)

    def filter_response_model(
        self, samples: QuerySet[Sample], name: str, model: str
    ) -> QuerySet[Sample]:
        exists = extensions.sample_condition(
            extensions.MODEL_RESPONSE, dataset=self._dataset(), model=model
        )
        return samples.none() if exists is None else samples.filter(exists)

    def filter_verdict(self, samples: QuerySet[Sample], name: str, label: str) -> QuerySet[Sample]:
        exists = extensions.sample_condition(
            extensions.VERDICT_LABEL, dataset=self._dataset(), label=label
        )
        return samples.none() if exists is None else samples.filter(exists)

    def filter_score(self, samples: QuerySet[Sample], name: str, _bound: float) -> QuerySet[Sample]:
        # Both bounds test the same verdict: one condition, given by the first bound present.
        low, high = self._value("score_min"), self._value("score_max")
        if name == "score_max" and low is not None:
            return samples
        exists = extensions.sample_condition(
            extensions.VERDICT_SCORE, dataset=self._dataset(), low=low, high=high
        )
        return samples.none() if exists is None else samples.filter(exists)

    def after(self, samples: QuerySet[Sample], name: str, day: datetime.date) -> QuerySet[Sample]:
        return samples.filter(**{f"{name}__gte": _day_start(day)})

    def before(self, samples: QuerySet[Sample], name: str, day: datetime.date) -> QuerySet[Sample]:
        # Through the whole day: before the start of the next one (the last day has none).
        if day == datetime.date.max:
            return samples
        return samples.filter(**{f"{name}__lt": _day_start(day + datetime.timedelta(days=1))})

    def filter_ordering(
        self, samples: QuerySet[Sample], name: str, ordering: str
    ) -> QuerySet[Sample]:
        return samples.order_by(*order_by(ordering))


def order_by(ordering: str) -> tuple[str, ...]:
    """The columns a sort key orders by, descending with a leading '-'."""
    columns = ORDERINGS[ordering.removeprefix("-")]
    return tuple(f"-{c}" for c in columns) if ordering.startswith("-") else columns


def _last_snapshot_id(dataset: Dataset) -> int | None:
    """The dataset's last finished snapshot, if it has one."""
    last: int | None = (
        Snapshot.objects.filter(dataset=dataset, status=JobStatus.SUCCEEDED)
        .order_by("-finished_at", "-pk")
        .values_list("pk", flat=True)
        .first()
    )
    return last


def _in_snapshot(snapshot_id: int) -> QuerySet[SnapshotEntry]:
    """The snapshot's entry holding the outer sample as it is now (same content hash)."""
    return SnapshotEntry.objects.filter(
        snapshot_id=snapshot_id,
        external_id=OuterRef("external_id"),
        content_hash=OuterRef("content_hash"),
    )


# --- the filter as a value -------------------------------------------------------------------

# The attributes whose parameter has another name.
_PARAM_OF = {"statuses": "status"}
# Parameters on the judges' work: the API gives judge-derived data to leads only.
JUDGE_PARAMS = ("judges_disagree", "has_response", "response_model", "verdict")
SCORE_PARAMS = ("score_min", "score_max")
# Parameters on other reviewers' work: hidden from non-leads in blind review.
REVIEW_PARAMS = ("reviewer", "decision")


@dataclass(frozen=True)
class SampleFilter:
    search: str = ""
    statuses: tuple[str, ...] = ()
    category: str = ""
    question_format: str = ""
    scenario: str = ""
    external_id: str = ""
    # True: a judge disagrees with the label; False: every judge that voted agrees (samples no
    # judge voted on match neither).
    judges_disagree: bool | None = None
    reviewer: str = ""
    # Among the sample's reviews (the reviewer's, with ``reviewer``): accept, correct, reject
    # or skip.
    decision: str = ""
    changed: bool = False
    # True: only samples in a possible duplicate pair (either side); False: none of them.
    duplicates: bool | None = None
    # True: only gold items; False: none of them (leads only: reviewers must not learn them).
    gold: bool | None = None
    # True: samples with a model's response (any model); False: with none.
    has_response: bool | None = None
    response_model: str = ""
    # Samples with a judge's verdict of this label / a scored verdict within [min, max].
    verdict: str = ""
    score_min: float | None = None
    score_max: float | None = None
    created_after: datetime.date | None = None
    created_before: datetime.date | None = None
    updated_after: datetime.date | None = None
    updated_before: datetime.date | None = None
    ordering: str = "id"
    problems: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> SampleFilter:
        """Read a filter from query parameters (a QueryDict or a plain mapping), through the
        filter set's form.

        Values it cannot use are left out and described in ``problems``; ``strict()`` turns
        them into a FilterError for the API.
        """
        form = SampleFilterSet(data=params).form
        form.is_valid()
        values = {
            attribute: form.cleaned_data[_PARAM_OF.get(attribute, attribute)]
            for attribute in _ATTRIBUTES
            if _PARAM_OF.get(attribute, attribute) in form.cleaned_data
        }
        problems = {name: str(errors[0]) for name, errors in form.errors.items()}
        return cls(**values, problems=problems)

    def strict(self) -> SampleFilter:
        """The filter itself, or a FilterError when a parameter could not be used."""
        if self.problems:
            raise FilterError(self.problems)
        return self

    def order_by(self) -> tuple[str, ...]:
        return order_by(self.ordering)

    def to_params(self) -> list[tuple[str, str]]:
        """The filter as query parameters, defaults left out (for links and hidden fields)."""
        params: list[tuple[str, str]] = []
        for attribute in _ATTRIBUTES:
            value = getattr(self, attribute)
            name = _PARAM_OF.get(attribute, attribute)
            if value is None or value in ("", ()) or (attribute == "changed" and not value):
                continue
            if attribute == "ordering" and value == "id":
                continue
            if attribute == "statuses":
                params += [(name, status) for status in value]
            elif isinstance(value, bool):
                params.append((name, "true" if value else "false"))
            elif isinstance(value, datetime.date):
                params.append((name, value.isoformat()))
            else:
                params.append((name, str(value)))
        return params

    def query(self) -> QueryDict:
        """The filter as the QueryDict the filter set reads."""
        return QueryDict(urlencode(self.to_params()))

    @property
    def is_empty(self) -> bool:
        return not [p for p in self.to_params() if p[0] != "ordering"]

    def used(self) -> set[str]:
        """The parameters this filter sets (not left at their defaults)."""
        return {name for name, _value in self.to_params()}

    def refused_for(self, *, user: Any, dataset: Dataset) -> dict[str, str]:
        """The parameters of this filter the user may not filter on, each with the reason:
        judge-derived ones and gold items are for leads, and in blind review only leads may
        filter on other reviewers' work (a reviewer may on their own)."""
        used = self.used()
        refused: dict[str, str] = {}
        if not sees_judge_votes(user):
            # Filtering on the judges' work would reveal it sample by sample.
            message = _("Only project leads may filter on the judges' votes.")
            refused |= {p: message for p in (*JUDGE_PARAMS, *SCORE_PARAMS) if p in used}
        if "gold" in used and not is_lead(user):
            refused["gold"] = _("Only project leads may filter on gold items.")
        # A reviewer's own work is theirs to find: reviewer=<their name>, with a decision or not.
        own = bool(self.reviewer) and self.reviewer == getattr(user, "username", None)
        if (
            used & set(REVIEW_PARAMS)
            and not own
            and not is_lead(user)
            and not extensions.others_work_visible_in(user=user, dataset=dataset)
        ):
            message = _("In blind review only leads may filter on other reviewers' work.")
            refused |= {p: message for p in REVIEW_PARAMS if p in used}
        return refused

    def without(self, names: set[str] | Mapping[str, Any]) -> SampleFilter:
        """This filter with these parameters left at their defaults."""
        defaults = SampleFilter()
        attributes = {a for a in _ATTRIBUTES if _PARAM_OF.get(a, a) in names}
        return replace(self, **{a: getattr(defaults, a) for a in attributes})


_ATTRIBUTES = tuple(f.name for f in fields(SampleFilter) if f.name != "problems")


def samples_filtered(*, dataset: Dataset, filter: SampleFilter) -> QuerySet[Sample]:
    """The dataset's samples that ``filter`` selects, in its order (the filter set applied)."""
    filterset = SampleFilterSet(
        data=filter.query(), queryset=Sample.objects.filter(dataset=dataset), dataset=dataset
    )
    samples: QuerySet[Sample] = filterset.qs
    return samples
