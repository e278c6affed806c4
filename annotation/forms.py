"""HTML forms of the annotation app."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import DatasetKind, TermKind, term_kinds
from annotation.presets import PRESETS
from core.forms import Form as MarkedForm
from core.roles import ANNOTATOR, AUDITOR


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


class DatasetInstructionsForm(MarkedForm):
    instructions = forms.CharField(
        label=_("Instructions for reviewers"),
        widget=forms.Textarea(attrs={"rows": 16}),
        required=False,
        strip=True,
        help_text=_(
            "Markdown: headings, lists, emphasis, links and tables. Shown above the sample in "
            "the review workbench; HTML is shown as text."
        ),
    )


# The roles a member may hold in one dataset, as one choice.
MEMBER_ROLE_CHOICES = [
    (ANNOTATOR, _("Annotator")),
    (AUDITOR, _("Auditor")),
    ("both", _("Annotator and auditor")),
]


def roles_of_choice(choice: str) -> frozenset[str]:
    """The member roles of a ``MEMBER_ROLE_CHOICES`` value."""
    return frozenset((ANNOTATOR, AUDITOR)) if choice == "both" else frozenset({choice})


def choice_of_roles(roles: frozenset[str]) -> str:
    """The ``MEMBER_ROLE_CHOICES`` value of a member's roles ('' for none)."""
    if roles >= {ANNOTATOR, AUDITOR}:
        return "both"
    return next(iter(roles), "")


class MemberAddForm(MarkedForm):
    # The page's <datalist id="member-candidates"> suggests the people not yet members.
    username = forms.CharField(
        label=_("Username"),
        max_length=150,
        widget=forms.TextInput(attrs={"list": "member-candidates", "autocomplete": "off"}),
    )
    role = forms.ChoiceField(
        label=_("Role in this dataset"),
        choices=[("", _("Their own role")), *MEMBER_ROLE_CHOICES],
        required=False,
    )

    def roles(self) -> frozenset[str] | None:
        choice = self.cleaned_data.get("role") or ""
        return roles_of_choice(choice) if choice else None


class MemberRolesForm(MarkedForm):
    role = forms.ChoiceField(label=_("Role in this dataset"), choices=MEMBER_ROLE_CHOICES)

    def roles(self) -> frozenset[str]:
        return roles_of_choice(self.cleaned_data["role"])


class TermAddForm(MarkedForm):
    kind = forms.ChoiceField(label=_("Kind"), choices=TermKind.choices)
    code = forms.CharField(label=_("Code"), max_length=100)
    name = forms.CharField(label=_("Name"), max_length=200)
    name_zh = forms.CharField(label=_("Chinese name"), max_length=200, required=False)
    parent_code = forms.CharField(label=_("Parent code"), max_length=100, required=False)

    def __init__(self, *args: Any, dataset_kind: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if dataset_kind:
            kind_field = self.fields["kind"]
            assert isinstance(kind_field, forms.ChoiceField)
            kind_field.choices = [(k.value, k.label) for k in term_kinds(dataset_kind)]


class TermRenameForm(MarkedForm):
    name = forms.CharField(label=_("Name"), max_length=200)
    name_zh = forms.CharField(label=_("Chinese name"), max_length=200, required=False)


class PresetLoadForm(MarkedForm):
    preset = forms.ChoiceField(
        label=_("Taxonomy preset"), choices=[(code, p.name) for code, p in PRESETS.items()]
    )

    def __init__(self, *args: Any, dataset_kind: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if dataset_kind:
            preset_field = self.fields["preset"]
            assert isinstance(preset_field, forms.ChoiceField)
            preset_field.choices = [
                (code, p.name) for code, p in PRESETS.items() if p.kind == dataset_kind
            ]
