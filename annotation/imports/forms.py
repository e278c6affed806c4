"""The form a lead fills to import candidate samples into a dataset."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.forms import BoundField
from django.utils.translation import gettext_lazy as _

from annotation.imports.formats import format_choices
from annotation.models import ImportSourceKind
from core.forms import Form as MarkedForm


class ImportForm(MarkedForm):
    format = forms.ChoiceField(label=_("Format"), choices=format_choices)
    source_kind = forms.ChoiceField(
        label=_("Source"),
        choices=ImportSourceKind.choices,
        initial=ImportSourceKind.UPLOAD,
        widget=forms.RadioSelect,
    )
    file = forms.FileField(
        label=_("File or zip"),
        required=False,
        help_text=_("A dataset file, or a zip holding the dataset file and its media."),
    )
    path = forms.CharField(
        label=_("Path on the server"),
        required=False,
        max_length=1000,
        help_text=_("An absolute path to a file, folder or zip under an allowed folder."),
    )
    s3_url = forms.CharField(
        label=_("S3 prefix"),
        required=False,
        max_length=1000,
        help_text=_("s3://bucket/prefix holding the dataset file and its media."),
    )
    dataset_file = forms.CharField(
        label=_("Dataset file"),
        required=False,
        max_length=300,
        help_text=_("Only when a zip, folder or prefix holds several candidate files."),
    )

    # The input each source reads (the dataset file's name serves every one of them).
    SOURCE_FIELDS: dict[str, str] = {
        ImportSourceKind.UPLOAD.value: "file",
        ImportSourceKind.SERVER_PATH.value: "path",
        ImportSourceKind.S3_PREFIX.value: "s3_url",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not settings.IMPORT_SERVER_ROOTS:
            # No folder is open to imports: the source is offered to no one.
            source = self.fields["source_kind"]
            assert isinstance(source, forms.ChoiceField)
            source.choices = [
                (value, label)
                for value, label in ImportSourceKind.choices
                if value != ImportSourceKind.SERVER_PATH
            ]
            del self.fields["path"]

    def fields_by_source(self) -> list[tuple[BoundField, str]]:
        """Each field with the source it belongs to ("" for those of every source), for the
        page to show only the chosen source's input."""
        source_of = {name: kind for kind, name in self.SOURCE_FIELDS.items()}
        return [(self[name], source_of.get(name, "")) for name in self.fields]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        kind = data.get("source_kind")
        required = self.SOURCE_FIELDS.get(str(kind))
        if required and not data.get(required):
            self.add_error(required, _("Give this for the source you chose."))
        return data

    def source(self) -> str:
        """The path or S3 address of the chosen source ("" for an upload)."""
        kind = self.cleaned_data["source_kind"]
        if kind == ImportSourceKind.SERVER_PATH:
            return str(self.cleaned_data.get("path", ""))
        if kind == ImportSourceKind.S3_PREFIX:
            return str(self.cleaned_data["s3_url"])
        return ""
