"""The forms that upload model responses or verdicts on a dataset's judging page, and that
confirm how an lmms-eval log's doc_id matches the dataset's samples."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import ImportKind
from judging.services.harness import DOC_ORDERS, EXTERNAL_ID, POSITION

KINDS = [
    (ImportKind.RESPONSES.value, _("Model responses")),
    (ImportKind.VERDICTS.value, _("Verdicts made elsewhere (JSON lines)")),
]
FORMATS = [
    ("auto", _("Detect from the files")),
    ("lmms_eval", _("lmms-eval log (--log_samples output folder)")),
    ("vlmevalkit", _("VLMEvalKit predictions (xlsx, tsv or csv; evaluated files too)")),
    ("logicvista", _("LogicVista answer file (<MODEL>-answers.json)")),
    ("jsonl", _("JSON lines")),
]
DOC_ORDER_CHOICES = [
    (POSITION, _("doc_id is the sample's position in the dataset's import order (from 0)")),
    (EXTERNAL_ID, _("doc_id is the sample's external id")),
]


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (a harness's output folder, or a handful of files)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> Any:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(item, initial) for item in data]
        return [single(data, initial)] if data else []


class UploadForm(forms.Form):
    kind = forms.ChoiceField(label=_("What the file holds"), choices=KINDS)
    format = forms.ChoiceField(
        label=_("Format of model responses"), choices=FORMATS, initial="auto"
    )
    model = forms.CharField(
        label=_("Model name"),
        required=False,
        max_length=200,
        help_text=_(
            "Optional: by default it comes from each line, the LogicVista file's name, "
            "lmms-eval's model_args or VLMEvalKit's output folder."
        ),
    )
    file = MultipleFileField(
        label=_("Files"),
        required=False,
        help_text=_(
            "One file, a zip of several (for example one answer file per model), or several "
            "files at once."
        ),
    )
    folder = MultipleFileField(
        label=_("Or a folder"),
        required=False,
        help_text=_("A harness's output folder as it wrote it (its sub-folders are kept)."),
    )
    # The folder's files' paths inside it, in the order they are sent (set by upload-form.js).
    folder_paths = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["file"].widget.attrs.update(
            {"accept": ".json,.jsonl,.zip,.xlsx,.tsv,.csv", "multiple": True}
        )
        self.fields["folder"].widget.attrs.update(
            {"webkitdirectory": True, "multiple": True, "data-folder-paths": "id_folder_paths"}
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("file") and not data.get("folder"):
            raise forms.ValidationError(_("Choose a file (or a folder) to upload."))
        return data


class ConfirmForm(forms.Form):
    token = forms.CharField(widget=forms.HiddenInput)
    doc_order = forms.ChoiceField(
        label=_("How doc_id matches the dataset's samples"),
        choices=DOC_ORDER_CHOICES,
        widget=forms.RadioSelect,
    )


assert {code for code, _label in DOC_ORDER_CHOICES} == set(DOC_ORDERS)
