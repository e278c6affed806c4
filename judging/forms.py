"""Forms of the judging pages: configure a judge, start a job."""

from __future__ import annotations

import copy
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from core.forms import Form as MarkedForm
from judging import services
from judging.models import Judge, JudgeKind


def key_env_help() -> str:
    """The help text of the key-variable field, naming the prefix in force."""
    return gettext(
        "The name of the workers' environment variable that holds the key, never the key; it "
        "must start with %(prefix)s (for example %(prefix)sOPENAI). Leave it empty for an "
        "endpoint without a key."
    ) % {"prefix": services.judge_key_prefix()}


def base_url_help() -> str:
    return gettext(
        "http:// or https://. Loopback, private and link-local addresses (a local vLLM or "
        "Ollama) are refused unless the setting JUDGE_ALLOWED_HOSTS lists their host:port."
    )


class _JudgeFields(forms.ModelForm[Judge]):
    base_url = forms.URLField(
        label=_("base URL"), required=False, max_length=500, assume_scheme="https"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["api_key_env"].help_text = key_env_help()
        self.fields["base_url"].help_text = base_url_help()


# Judge settings left to the admin: the token and retry limits (``enabled`` is on the edit
# page only).
_NOT_ON_THE_PAGES = {
    "max_tokens",
    "max_attempts",
    "backoff_base_s",
    "backoff_max_s",
    "retry_after_max_s",
    "enabled",
}
_PAGE_FIELDS = [f for f in services.JUDGE_FIELDS if f not in _NOT_ON_THE_PAGES]


class JudgeForm(_JudgeFields):
    class Meta:
        model = Judge
        fields = ["name", *_PAGE_FIELDS]


class JudgeEditForm(_JudgeFields):
    """A judge's settings on its edit page: everything but its name, which verdict imports
    refer to."""

    class Meta:
        model = Judge
        fields = [*_PAGE_FIELDS, "enabled"]


class JudgeAdminForm(_JudgeFields):
    """The admin's judge form: the same checks as every other way of saving a judge."""

    class Meta:
        model = Judge
        fields = ["name", *services.JUDGE_FIELDS]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        judge = copy.copy(self.instance)
        for name, value in cleaned.items():
            setattr(judge, name, value)
        try:
            services.judge_validate(judge=judge)
        except ValidationError as exc:
            self.add_error(None, exc)
        return cleaned


class JobStartForm(MarkedForm):
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
