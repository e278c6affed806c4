"""HTML pages of release snapshots: a dataset's snapshots with the form to make one, a
snapshot's progress and manifest, and the short-lived download links. Leads only.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
)
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import selectors
from annotation.models import Dataset, SampleStatus, Snapshot, TermKind
from annotation.snapshots import selectors as snapshot_selectors
from annotation.snapshots import services as snapshot_services
from core.forms import Form as MarkedForm
from core.jobs import RETRYABLE
from core.roles import acting_user, is_lead

_TERM_FILTERS = {
    "groups": TermKind.GROUP,
    "categories": TermKind.CATEGORY,
    "formats": TermKind.FORMAT,
    "scenarios": TermKind.SCENARIO,
}


class SnapshotCreateForm(MarkedForm):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200)
    format = forms.ChoiceField(label=gettext_lazy("Format"))
    statuses = forms.MultipleChoiceField(
        label=gettext_lazy("Statuses"),
        choices=[(v, label) for v, label in SampleStatus.choices if v != SampleStatus.REMOVED],
        initial=[SampleStatus.VERIFIED],
        widget=forms.CheckboxSelectMultiple,
        help_text=gettext_lazy("Removed samples are never exported."),
    )
    groups = forms.MultipleChoiceField(label=gettext_lazy("Groups"), required=False)
    categories = forms.MultipleChoiceField(label=gettext_lazy("Categories"), required=False)
    formats = forms.MultipleChoiceField(label=gettext_lazy("Question formats"), required=False)
    scenarios = forms.MultipleChoiceField(label=gettext_lazy("Scenarios"), required=False)

    def __init__(self, *args: Any, dataset: Dataset, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = list(snapshot_services.EXPORT_FORMATS.items())  # type: ignore[attr-defined]
        terms = list(selectors.taxonomy_terms(dataset=dataset))
        for name, kind in _TERM_FILTERS.items():
            choices = [(t.code, f"{t.code} · {t.display_name}") for t in terms if t.kind == kind]
            if choices:
                self.fields[name].choices = choices  # type: ignore[attr-defined]
            else:
                del self.fields[name]


def _lead_dataset(request: HttpRequest, dataset_id: int) -> Dataset:
    if not is_lead(request.user):
        raise PermissionDenied(_("Only project leads may export snapshots."))
    dataset = selectors.dataset_get_visible(user=request.user, dataset_id=dataset_id)
    if dataset is None:
        raise Http404(_("No such dataset."))
    return dataset


def _lead_snapshot(request: HttpRequest, snapshot_id: int) -> Snapshot:
    if not is_lead(request.user):
        raise PermissionDenied(_("Only project leads may export snapshots."))
    snapshot = snapshot_selectors.snapshot_get_for_lead(user=request.user, snapshot_id=snapshot_id)
    if snapshot is None:
        raise Http404(_("No such snapshot."))
    return snapshot


@require_http_methods(["GET", "POST"])
def snapshot_list(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = _lead_dataset(request, dataset_id)
    form = SnapshotCreateForm(request.POST or None, dataset=dataset)
    if request.method == "POST" and form.is_valid():
        try:
            snapshot = snapshot_services.snapshot_create_from_fields(
                dataset=dataset, fields=form.cleaned_data, by=acting_user(request.user)
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Snapshot queued; it is built in the background."))
            return redirect("annotation:snapshot_detail", snapshot_id=snapshot.pk)
    return render(
        request,
        "annotation/snapshot_list.html",
        {
            "dataset": dataset,
            "snapshots": snapshot_selectors.snapshot_list(dataset=dataset),
            "form": form,
        },
    )


@require_GET
def snapshot_detail(request: HttpRequest, snapshot_id: int) -> HttpResponse:
    snapshot = _lead_snapshot(request, snapshot_id)
    manifest = snapshot.manifest or {}
    return render(
        request,
        "annotation/snapshot_detail.html",
        {
            "snapshot": snapshot,
            "dataset": snapshot.dataset,
            "counts": manifest.get("counts", {}),
            "files": sorted((manifest.get("files") or {}).items()),
            "artifact": manifest.get("artifact") or {},
            "diff": manifest.get("diff"),
            "manifest_json": manifest,
            "can_retry": snapshot.status in RETRYABLE,
        },
    )


@require_POST
def snapshot_retry(request: HttpRequest, snapshot_id: int) -> HttpResponse:
    snapshot = _lead_snapshot(request, snapshot_id)
    try:
        snapshot_services.snapshot_retry(snapshot=snapshot)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("annotation:snapshot_detail", snapshot_id=snapshot.pk)


@require_GET
def snapshot_download(request: HttpRequest, snapshot_id: int) -> HttpResponse:
    """Send a lead to a short-lived link: a presigned S3 URL or a signed local URL."""
    snapshot = _lead_snapshot(request, snapshot_id)
    which = request.GET.get("file", "release")
    link = snapshot_selectors.snapshot_download_link(snapshot=snapshot, which=which)
    if link is None:
        raise Http404(_("The snapshot is not ready to download."))
    return HttpResponseRedirect(link)


@login_not_required
@require_GET
def snapshot_file(request: HttpRequest, token: str) -> HttpResponse | FileResponse:
    """Stream a snapshot file to whoever holds a valid, unexpired signed link (from a lead)."""
    name = snapshot_selectors.snapshot_file_from_token(token)
    if name is None:
        return HttpResponse(
            _("This download link is invalid or has expired."),
            status=403,
            content_type="text/plain",
        )
    handle = default_storage.open(name, "rb")
    return FileResponse(handle, as_attachment=True, filename=name.rsplit("/", 1)[-1])
