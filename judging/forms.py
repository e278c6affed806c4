"""Forms of the judging pages: configure a judge, start a job."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from judging.models import Judge, JudgeKind


class JudgeForm(forms.ModelForm[Judge]):
    base_url = forms.URLField(
        label=_("base URL"), required=False, max_length=500, assume_scheme="https"
    )

    class Meta:
        model = Judge
        fields = [
            "name",
            "kind",
            "base_url",
            "model",
            "api_key_env",
            "temperature",
            "timeout_s",
            "max_concurrency",
            "requests_per_minute",
            "text_only",
            "family",
            "prompt_version",
        ]


class JobStartForm(forms.Form):
    task = forms.ChoiceField(
        label=_("Task"),
        choices=[("answerability", _("Answerability consensus")), ("scoring", _("Scoring"))],
    )
    judges = forms.ModelMultipleChoiceField(
        label=_("Judges"),
        queryset=Judge.objects.none(),
        widget=forms.CheckboxSelectMultiple,
    )
    repeats = forms.IntegerField(label=_("Votes per item"), min_value=1, max_value=20, initial=1)
    models = forms.MultipleChoiceField(
        label=_("Evaluated models (scoring; none chosen means all)"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    def __init__(self, *args: Any, model_names: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        judges = Judge.objects.filter(enabled=True).exclude(kind=JudgeKind.EXTERNAL)
        self.fields["judges"].queryset = judges.order_by("name")  # type: ignore[attr-defined]
        self.fields["models"].choices = [(name, name) for name in model_names]  # type: ignore[attr-defined]
