"""HTML pages of release snapshots: a dataset's snapshots with the form to make one, a
snapshot's progress and manifest, its comparison with any other snapshot of the dataset, and
the short-lived download links. Leads only.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.core.paginator import EmptyPage, Page, Paginator
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
)
from django.shortcuts import redirect, render
from django.utils import formats
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import selectors
from annotation.models import Dataset, JobStatus, SampleStatus, Snapshot, TermKind
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


class SnapshotCompareForm(forms.Form):
    """Which other finished snapshot of the dataset to compare a snapshot with (GET)."""

    against = forms.TypedChoiceField(label=gettext_lazy("Compare with"), coerce=int)

    def __init__(self, *args: Any, choices: list[Snapshot], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["against"].choices = [(s.pk, _snapshot_label(s)) for s in choices]  # type: ignore[attr-defined]


def _snapshot_label(snapshot: Snapshot) -> str:
    return f"{snapshot.name} · {formats.date_format(snapshot.created_at, 'SHORT_DATETIME_FORMAT')}"


def _page_number(request: HttpRequest) -> int:
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1


def _comparison(
    request: HttpRequest, snapshot: Snapshot
) -> tuple[
    SnapshotCompareForm | None, snapshot_selectors.SnapshotComparison | None, Page[int] | None
]:
    """The compare form, the comparison it asks for (by default with the previous snapshot)
    and its pager; 404 for a snapshot that is not another finished one of the dataset."""
    if snapshot.status != JobStatus.SUCCEEDED:
        return None, None, None
    choices = {s.pk: s for s in snapshot_selectors.snapshot_compare_choices(snapshot=snapshot)}
    options = list(choices.values())
    if "against" in request.GET:
        form = SnapshotCompareForm(request.GET, choices=options)
        if not form.is_valid():
            raise Http404(_("No such snapshot of this dataset to compare with."))
        against = choices.get(form.cleaned_data["against"])
    else:
        against = choices.get(snapshot.previous_id) if snapshot.previous_id else None
        initial = {"against": against.pk} if against else {}
        form = SnapshotCompareForm(initial=initial, choices=options)
    if against is None:
        return form, None, None
    page = _page_number(request)
    comparison = snapshot_selectors.snapshot_compare(snapshot=snapshot, against=against, page=page)
    paginator = Paginator(range(comparison.diff.changed), snapshot_selectors.COMPARE_PAGE)
    try:
        pager = paginator.page(page)
    except EmptyPage as exc:
        raise Http404(_("No such page.")) from exc
    return form, comparison, pager


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
    compare_form, comparison, pager = _comparison(request, snapshot)
    linked: dict[str, list[tuple[str, int | None]]] = {}
    changed_rows: list[tuple[snapshot_selectors.ChangedSample, int | None]] = []
    if comparison is not None:
        diff = comparison.diff
        lists = {
            "added": diff.added_ids,
            "removed": diff.removed_ids,
            "taken_down": diff.taken_down_ids,
        }
        shown = [i for ids in lists.values() for i in ids]
        links = snapshot_selectors.snapshot_sample_ids(
            dataset_id=snapshot.dataset_id,
            external_ids=[*shown, *(c.external_id for c in comparison.changed)],
        )
        linked = {kind: [(i, links.get(i)) for i in ids] for kind, ids in lists.items()}
        changed_rows = [(c, links.get(c.external_id)) for c in comparison.changed]
    return render(
        request,
        "annotation/snapshot_detail.html",
        {
            "snapshot": snapshot,
            "dataset": snapshot.dataset,
            "counts": manifest.get("counts", {}),
            "files": snapshot_selectors.snapshot_manifest_files(manifest),
            "artifact": manifest.get("artifact") or {},
            "compare_form": compare_form,
            "comparison": comparison,
            "linked": linked,
            "changed_rows": changed_rows,
            "pager": pager,
            "query": urlencode({"against": comparison.against.pk}) if comparison else "",
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
