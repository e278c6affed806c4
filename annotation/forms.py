"""HTML forms of the annotation app."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import DatasetKind
from annotation.presets import PRESETS


class DatasetCreateForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200)
    kind = forms.ChoiceField(label=_("Kind"), choices=DatasetKind.choices)
    preset = forms.ChoiceField(
        label=_("Taxonomy preset"),
        choices=[("", _("None"))] + [(code, p.name) for code, p in PRESETS.items()],
        required=False,
    )
    version = forms.CharField(label=_("Version"), max_length=50, initial="1.0")
    description = forms.CharField(label=_("Description"), widget=forms.Textarea, required=False)
