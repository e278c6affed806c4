"""HTML forms of the annotation app."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import DatasetKind, TermKind
from annotation.presets import PRESETS
from core.forms import Form as MarkedForm


class DatasetCreateForm(MarkedForm):
    name = forms.CharField(label=_("Name"), max_length=200)
    kind = forms.ChoiceField(label=_("Kind"), choices=DatasetKind.choices)
    preset = forms.ChoiceField(
        label=_("Taxonomy preset"),
        choices=[("", _("None"))] + [(code, p.name) for code, p in PRESETS.items()],
        required=False,
    )
    version = forms.CharField(label=_("Version"), max_length=50, initial="1.0")
    description = forms.CharField(label=_("Description"), widget=forms.Textarea, required=False)


class MemberAddForm(MarkedForm):
    username = forms.CharField(label=_("Username"), max_length=150)


class TermAddForm(MarkedForm):
    kind = forms.ChoiceField(label=_("Kind"), choices=TermKind.choices)
    code = forms.CharField(label=_("Code"), max_length=100)
    name = forms.CharField(label=_("Name"), max_length=200)
    name_zh = forms.CharField(label=_("Chinese name"), max_length=200, required=False)
    parent_code = forms.CharField(label=_("Parent code"), max_length=100, required=False)


class TermRenameForm(MarkedForm):
    name = forms.CharField(label=_("Name"), max_length=200)
    name_zh = forms.CharField(label=_("Chinese name"), max_length=200, required=False)


class PresetLoadForm(MarkedForm):
    preset = forms.ChoiceField(
        label=_("Taxonomy preset"), choices=[(code, p.name) for code, p in PRESETS.items()]
    )
