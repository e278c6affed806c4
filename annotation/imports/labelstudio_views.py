"""The Label Studio import page: upload an export, confirm how its tasks map to samples,
then the import runs as a job (``annotation.imports.labelstudio``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django import forms
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from annotation.formats.labelstudio import (
    DATA_FIELDS,
    LABEL_CONTROL_FIELDS,
    REQUIRED_DATA_FIELDS,
    LsMapping,
    MappingGuess,
)
from annotation.formats.records import FormatError
from annotation.imports import jobs as import_jobs
from annotation.imports.labelstudio import labelstudio_inspect
from annotation.imports.sources import SourceError
from annotation.imports.uploads import open_stored_files
from annotation.lookups import dataset_or_404
from annotation.models import Dataset, ImportKind
from core.roles import acting_user, require_lead

SALT = "annotation.labelstudio.mapping"
MAX_AGE = 24 * 3600
FIELD_LABELS = {
    "external_id": gettext_lazy("External id"),
    "image": gettext_lazy("Image"),
    "question": gettext_lazy("Question"),
    "reference_answer": gettext_lazy("Reference answer"),
    "explanation": gettext_lazy("Explanation"),
    "split": gettext_lazy("Split"),
    "answerability_group": gettext_lazy("Answerability group"),
    "category_code": gettext_lazy("Category"),
    "question_format": gettext_lazy("Question format"),
    "scenario": gettext_lazy("Scenario"),
}


class UploadForm(forms.Form):
    file = forms.FileField(
        label=gettext_lazy("Label Studio export (JSON, or a zip with its media)"),
    )


class MappingForm(forms.Form):
    """Which data key fills each sample field and which control gives each label field."""

    token = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, guess: MappingGuess, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        none = [("", _("(none)"))]
        keys = none + [(k, k) for k in guess.data_keys]
        controls = none + [(c, c) for c in guess.controls]
        for name in DATA_FIELDS:
            required = name in REQUIRED_DATA_FIELDS
            label = FIELD_LABELS[name]
            self.fields[f"data_{name}"] = forms.ChoiceField(
                label=_("%(field)s: data key (required)") % {"field": label}
                if required
                else _("%(field)s: data key") % {"field": label},
                choices=keys,
                required=False,
                initial=guess.guess.data.get(name, ""),
            )
        for name in LABEL_CONTROL_FIELDS:
            self.fields[f"control_{name}"] = forms.ChoiceField(
                label=_("%(field)s: control in the annotations") % {"field": FIELD_LABELS[name]},
                choices=controls,
                required=False,
                initial=guess.guess.controls.get(name, ""),
            )

    def mapping(self) -> LsMapping:
        data = self.cleaned_data
        return LsMapping(
            {n: data[f"data_{n}"] for n in DATA_FIELDS if data.get(f"data_{n}")},
            {n: data[f"control_{n}"] for n in LABEL_CONTROL_FIELDS if data.get(f"control_{n}")},
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in REQUIRED_DATA_FIELDS:
            if not data.get(f"data_{name}"):
                self.add_error(
                    f"data_{name}",
                    _("Say which data key holds the %(field)s: every sample needs one.")
                    % {"field": str(FIELD_LABELS[name]).lower()},
                )
        return data


def _inspect(source: str, name: str) -> MappingGuess:
    try:
        with open_stored_files(source, name, (".json",), full_names=True) as files:
            return labelstudio_inspect(path=Path(files[0][1]))
    except (FormatError, SourceError) as exc:
        raise ValidationError(exc.message, code="bad_file") from exc


def _page(
    request: HttpRequest,
    dataset: Dataset,
    *,
    upload_form: UploadForm | None = None,
    mapping_form: MappingForm | None = None,
    guess: MappingGuess | None = None,
    status: int = 200,
) -> HttpResponse:
    return render(
        request,
        "annotation/labelstudio_import.html",
        {
            "dataset": dataset,
            "upload_form": upload_form or UploadForm(),
            "mapping_form": mapping_form,
            "guess": guess,
        },
        status=status,
    )


@require_http_methods(["GET", "POST"])
def labelstudio_import(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Upload a Label Studio export; the page then shows what it holds and the mapping."""
    require_lead(request, _("Only project leads may import samples."))
    dataset = dataset_or_404(request, dataset_id)
    if request.method == "GET":
        return _page(request, dataset)
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, dataset, upload_form=form, status=400)
    try:
        import_jobs.import_dataset_check_open(dataset)
        source, name = import_jobs.import_upload_store(form.cleaned_data["file"])
    except ValidationError as exc:
        form.add_error(None, exc)
        return _page(request, dataset, upload_form=form, status=400)
    try:
        guess = _inspect(source, name)
    except ValidationError as exc:
        default_storage.delete(source)
        form.add_error(None, exc)
        return _page(request, dataset, upload_form=form, status=400)
    token = signing.dumps({"dataset": dataset.pk, "source": source, "name": name}, salt=SALT)
    mapping_form = MappingForm(guess=guess, initial={"token": token})
    return _page(request, dataset, mapping_form=mapping_form, guess=guess)


@require_POST
def labelstudio_import_confirm(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Start the import with the confirmed mapping (or show what is missing from it)."""
    require_lead(request, _("Only project leads may import samples."))
    dataset = dataset_or_404(request, dataset_id)
    try:
        kept = signing.loads(request.POST.get("token", ""), salt=SALT, max_age=MAX_AGE)
    except signing.BadSignature:
        return _page(request, dataset, status=400)
    if kept.get("dataset") != dataset.pk:
        raise Http404
    try:
        guess = _inspect(kept["source"], kept["name"])
    except ValidationError as exc:
        form = UploadForm()
        form.add_error(None, exc)
        return _page(request, dataset, upload_form=form, status=400)
    mapping_form = MappingForm(request.POST, guess=guess)
    if not mapping_form.is_valid():
        return _page(request, dataset, mapping_form=mapping_form, guess=guess, status=400)
    try:
        job = import_jobs.import_stored_job_create(
            dataset=dataset,
            kind=ImportKind.SAMPLES,
            format="labelstudio",
            source=kept["source"],
            source_name=kept["name"],
            options=mapping_form.mapping().as_options(),
            created_by=acting_user(request.user),
        )
    except ValidationError as exc:
        mapping_form.add_error(None, exc)
        return _page(request, dataset, mapping_form=mapping_form, guess=guess, status=400)
    return redirect("annotation:import_job", job_id=job.pk)
