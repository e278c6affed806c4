"""The form a lead registers or edits a webhook endpoint with."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import SUBSCRIBABLE
from core.forms import Form


class EndpointForm(Form):
    url = forms.URLField(
        label=_("URL"),
        max_length=500,
        assume_scheme="https",
        help_text=_(
            "Where the events are POSTed. Public addresses only, unless the setting "
            "WEBHOOK_ALLOWED_HOSTS lists the host:port."
        ),
    )
    description = forms.CharField(label=_("Description"), max_length=200, required=False)
    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=[(e.value, e.label) for e in SUBSCRIBABLE],
        widget=forms.CheckboxSelectMultiple,
    )
    enabled = forms.BooleanField(label=_("Enabled"), required=False, initial=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["url"].widget.attrs["placeholder"] = "https://example.org/hooks/review"
