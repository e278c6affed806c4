"""The form that uploads model responses or verdicts on a dataset's judging page."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import ImportKind

KINDS = [
    (ImportKind.RESPONSES.value, _("Model responses")),
    (ImportKind.VERDICTS.value, _("Verdicts made elsewhere (JSON lines)")),
]
FORMATS = [
    ("logicvista", _("LogicVista answer file (<MODEL>-answers.json)")),
    ("jsonl", _("JSON lines")),
]


class UploadForm(forms.Form):
    kind = forms.ChoiceField(label=_("What the file holds"), choices=KINDS)
    format = forms.ChoiceField(
        label=_("Format of model responses"), choices=FORMATS, initial="logicvista"
    )
    model = forms.CharField(
        label=_("Model name"),
        required=False,
        max_length=200,
        help_text=_(
            "Optional: by default it comes from each line, or from the LogicVista file's name."
        ),
    )
    file = forms.FileField(
        label=_("File"),
        help_text=_("One file, or a zip of several (for example one answer file per model)."),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["file"].widget.attrs["accept"] = ".json,.jsonl,.zip"
