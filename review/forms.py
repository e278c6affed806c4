"""HTML forms of the review app: the lead's settings and the adjudication form."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from core.forms import Form as MarkedForm
from review.models import Decision, RejectReason
from review.selectors import TermField


class ReviewSettingsForm(MarkedForm):
    overlap = forms.IntegerField(label=_("Reviews per sample (k)"), min_value=1, max_value=10)
    blind = forms.BooleanField(label=_("Blind review"), required=False)
    show_judge_hints = forms.BooleanField(label=_("Show judge votes to reviewers"), required=False)
    lease_minutes = forms.IntegerField(
        label=_("Lease duration (minutes)"), min_value=1, max_value=7 * 24 * 60
    )
    gold_percent = forms.FloatField(
        label=_("Gold items (percentage of claims)"),
        min_value=0,
        max_value=50,
        required=False,
        help_text=_("Reviewers are served gold items at this rate; 0 turns them off."),
    )
    gold_feedback = forms.BooleanField(
        label=_("Show reviewers feedback after a gold item"), required=False
    )
    min_gold_accuracy_percent = forms.FloatField(
        label=_("Flag reviewers under this gold accuracy (%)"),
        min_value=0,
        max_value=100,
        required=False,
    )
    min_gold_items = forms.IntegerField(
        label=_("… once they answered this many gold items"),
        min_value=1,
        max_value=100_000,
        required=False,
    )


def field_labels(*, preset: str) -> dict[str, str]:
    """What each reviewable field is called on the forms (MMT-Bench calls its scenario, the
    TSV's ``l2-category``, a meta-task)."""
    labels = {
        "answerability_group": _("Answerability group"),
        "category_code": _("Category"),
        "scenario": _("Meta-task") if preset == "mmt_bench" else _("Scenario"),
        "reference_answer": _("Reference answer"),
        "explanation": _("Explanation"),
        "safety_label": _("Safety label"),
        "safety_category": _("Safety category"),
        "safety_subcategory": _("Safety subcategory"),
        "predicate": _("Predicate conditions, one per line"),
    }
    return {name: str(label) for name, label in labels.items()}


def _term_field(term: TermField, label: str) -> forms.Field:
    """A choice among the terms (the current value kept when it is not one), or free text
    with suggestions when the taxonomy has no terms for the field."""
    if not term.terms:
        return forms.CharField(
            label=label,
            required=False,
            widget=forms.TextInput(attrs={"list": f"terms-{term.name}"}),
        )
    choices = [("", "—"), *((t.code, f"{t.code} · {t.name}") for t in term.terms)]
    if term.off_taxonomy:
        choices.append((term.value, _("%(value)s (not in the taxonomy)") % {"value": term.value}))
    return forms.ChoiceField(label=label, choices=choices, required=False)


class AdjudicationForm(MarkedForm):
    decision = forms.ChoiceField(
        label=_("Decision"), choices=Decision.choices, widget=forms.RadioSelect
    )
    reject_reason = forms.ChoiceField(
        label=_("Reject reason"), choices=RejectReason.choices, required=False
    )
    note = forms.CharField(label=_("Note"), widget=forms.Textarea(attrs={"rows": 3}))
    # The sample's revision when the form was shown: a form posted again after the sample
    # changed (adjudicated meanwhile, or sent back by Back) is not applied a second time.
    revision = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(
        self,
        *args: Any,
        fields: tuple[str, ...],
        term_fields: dict[str, TermField],
        labels: dict[str, str],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.value_fields = fields
        text_area = forms.Textarea(attrs={"rows": 3})
        for name in fields:
            if name in term_fields:
                field = _term_field(term_fields[name], labels[name])
            elif name == "safety_label":
                field = forms.ChoiceField(
                    label=labels[name],
                    choices=[("safe", _("Safe")), ("unsafe", _("Unsafe"))],
                    required=False,
                )
            elif name in ("explanation", "predicate"):
                field = forms.CharField(label=labels[name], required=False, widget=text_area)
            else:
                field = forms.CharField(label=labels[name], required=False)
            self.fields[f"value_{name}"] = field

    def values(self) -> dict[str, Any]:
        """The values the lead changed in the form; untouched ones are left out, and so are
        the ones not posted at all (a partial post), so the service writes nothing the lead
        did not edit."""
        out: dict[str, Any] = {}
        for name in self.value_fields:
            key = f"value_{name}"
            if key not in self.data or key not in self.changed_data:
                continue
            value = self.cleaned_data.get(key, "")
            out[name] = value.splitlines() if name == "predicate" else value
        return out

    def add_service_error(self, error: ValidationError) -> None:
        """Show a service's refusal on the form: a message about a sample field goes to its
        ``value_`` field, one about a field of the form to that field, the rest on top."""
        if not hasattr(error, "error_dict"):
            self.add_error(None, error)
            return
        for name, problems in error.error_dict.items():
            if f"value_{name}" in self.fields:
                self.add_error(f"value_{name}", problems)
            elif name in self.fields:
                self.add_error(name, problems)
            else:
                self.add_error(None, problems)


_RATINGS = [(str(n), str(n)) for n in range(1, 6)]


class ReviewSubmitForm(forms.Form):
    """The workbench's review as a plain form post (the page without its script); the script
    sends the same fields to the API instead. ``values.<field>`` holds each reviewable field
    as shown; the service keeps only those that differ from the sample."""

    client_uuid = forms.UUIDField()
    decision = forms.ChoiceField(label=_("Decision"), choices=Decision.choices)
    reject_reason = forms.ChoiceField(
        label=_("Reject reason"), choices=RejectReason.choices, required=False
    )
    clarity = forms.TypedChoiceField(
        label=_("Clarity"), choices=_RATINGS, coerce=int, required=False, empty_value=None
    )
    naturalness = forms.TypedChoiceField(
        label=_("Naturalness"), choices=_RATINGS, coerce=int, required=False, empty_value=None
    )
    image_aligned = forms.NullBooleanField(required=False)
    audio_aligned = forms.NullBooleanField(required=False)
    note = forms.CharField(required=False, max_length=5000)

    def __init__(self, data: Any, *, fields: tuple[str, ...]) -> None:
        super().__init__(data)
        self.value_fields = fields

    def values(self) -> dict[str, Any]:
        found = {name: self.data[f"values.{name}"] for name in self.value_fields
                 if f"values.{name}" in self.data}  # fmt: skip
        if "predicate" in found:
            found["predicate"] = [c.strip() for c in found["predicate"].splitlines() if c.strip()]
        return found
