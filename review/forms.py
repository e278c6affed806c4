"""HTML forms of the review app: the lead's settings and the adjudication form."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from review import consensus
from review.models import Decision, RejectReason
from review.selectors import TermChoice


class ReviewSettingsForm(forms.Form):
    overlap = forms.IntegerField(label=_("Reviews per sample (k)"), min_value=1, max_value=10)
    blind = forms.BooleanField(label=_("Blind review"), required=False)
    show_judge_hints = forms.BooleanField(label=_("Show judge votes to reviewers"), required=False)
    lease_minutes = forms.IntegerField(
        label=_("Lease duration (minutes)"), min_value=1, max_value=7 * 24 * 60
    )


def _term_choices(terms: list[TermChoice]) -> list[tuple[str, str]]:
    return [("", "—"), *((t.code, f"{t.code} · {t.name}") for t in terms)]


class AdjudicationForm(forms.Form):
    decision = forms.ChoiceField(
        label=_("Decision"), choices=Decision.choices, widget=forms.RadioSelect
    )
    reject_reason = forms.ChoiceField(
        label=_("Reject reason"), choices=RejectReason.choices, required=False
    )
    note = forms.CharField(label=_("Note"), widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(
        self,
        *args: Any,
        kind: str,
        groups: list[TermChoice],
        categories: list[TermChoice],
        scenarios: list[TermChoice],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.value_fields = consensus.reviewable_fields(kind)
        text_area = forms.Textarea(attrs={"rows": 3})
        builders: dict[str, forms.Field] = {
            "answerability_group": forms.ChoiceField(
                label=_("Answerability group"), choices=_term_choices(groups), required=False
            ),
            "category_code": forms.ChoiceField(
                label=_("Category"), choices=_term_choices(categories), required=False
            ),
            "scenario": forms.ChoiceField(
                label=_("Scenario"), choices=_term_choices(scenarios), required=False
            ),
            "reference_answer": forms.CharField(label=_("Reference answer"), required=False),
            "explanation": forms.CharField(
                label=_("Explanation"), required=False, widget=text_area
            ),
            "safety_label": forms.ChoiceField(
                label=_("Safety label"),
                choices=[("safe", _("Safe")), ("unsafe", _("Unsafe"))],
                required=False,
            ),
            "predicate": forms.CharField(
                label=_("Predicate conditions, one per line"), required=False, widget=text_area
            ),
        }
        for name in self.value_fields:
            self.fields[f"value_{name}"] = builders[name]

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.value_fields:
            value = self.cleaned_data.get(f"value_{name}", "")
            out[name] = value.splitlines() if name == "predicate" else value
        return out
