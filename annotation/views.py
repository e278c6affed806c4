"""HTML pages of the annotation app: datasets, samples, and the permission-checked media view."""

from __future__ import annotations

import json
import mimetypes
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from annotation import extensions, selectors, services
from annotation.forms import DatasetCreateForm
from annotation.http import ranged_file_response
from annotation.lookups import dataset_or_404
from annotation.models import Sample, SampleRevision, SampleStatus
from core.roles import ANNOTATOR, acting_user, is_lead


@require_GET
def dataset_list(request: HttpRequest) -> HttpResponse:
    show_archived = request.GET.get("archived") == "1"
    visible = selectors.dataset_list_visible(user=request.user).order_by("name")
    if not show_archived:
        visible = visible.filter(archived=False)
    datasets = list(visible)
    return render(
        request,
        "annotation/dataset_list.html",
        {
            "datasets": datasets,
            "rows": extensions.dataset_list_cells(
                user=acting_user(request.user), datasets=datasets
            ),
            "columns": extensions.dataset_list_columns(user=acting_user(request.user)),
            "can_create": is_lead(request.user),
            "show_archived": show_archived,
        },
    )


@require_http_methods(["GET", "POST"])
def dataset_create(request: HttpRequest) -> HttpResponse:
    if not is_lead(request.user):
        raise PermissionDenied(_("Only project leads may create datasets."))
    form = DatasetCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            dataset = services.dataset_create(
                created_by=acting_user(request.user), **form.cleaned_data
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Dataset created."))
            return redirect("annotation:dataset_detail", dataset_id=dataset.pk)
    return render(request, "annotation/dataset_create.html", {"form": form})


@require_GET
def dataset_detail(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """A dataset's overview: where its samples stand, what to do next, and every page of it."""
    dataset = dataset_or_404(request, dataset_id)
    counts = selectors.dataset_status_counts(dataset=dataset)
    by_status = {row.status: row.count for row in counts}
    total = sum(by_status.values())
    imported = by_status[SampleStatus.IMPORTED]
    to_adjudicate = by_status[SampleStatus.NEEDS_ADJUDICATION]
    return render(
        request,
        "annotation/dataset_detail.html",
        {
            "dataset": dataset,
            "counts": counts,
            "total": total,
            "imported": imported,
            "to_adjudicate": to_adjudicate,
            # The "What to do next" bar only when it has something to say.
            "next_steps": bool((not total and not dataset.archived) or imported or to_adjudicate),
            "terms": selectors.taxonomy_terms(dataset=dataset),
            "is_lead": is_lead(request.user),
            # Auditors who do not annotate here get no Review link (its pages refuse them).
            "reviews_here": selectors.dataset_role_allows(
                user=request.user, dataset=dataset, role=ANNOTATOR
            ),
        },
    )


@require_GET
def sample_detail(request: HttpRequest, sample_id: int) -> HttpResponse:
    sample = selectors.sample_get_visible(user=request.user, sample_id=sample_id)
    if sample is None:
        raise Http404(_("No such sample."))
    others_visible = extensions.others_work_visible(user=request.user, sample=sample)
    history = [
        (
            revision,
            _revision_changes(revision),
            others_visible or revision.changed_by_id in (None, request.user.pk),
        )
        for revision in selectors.sample_history(sample=sample)
    ]
    panels = extensions.sample_panels(user=request.user, sample=sample)
    return render(
        request,
        "annotation/sample_detail.html",
        {"sample": sample, "history": history, "panels": panels},
    )


def _shown(value: Any) -> str:
    """A stored value as the history shows it: lists joined, blanks named."""
    if value in ("", None, [], {}):
        return _("(empty)")
    if isinstance(value, list):
        return "; ".join(
            f"{item.get('label', '')} {item.get('text', '')}".strip()
            if isinstance(item, dict)
            else str(item)
            for item in value
        )
    return str(value)


def _status_label(key: str, value: Any) -> Any:
    labels = dict(SampleStatus.choices)
    return str(labels.get(value, value)) if key == "status" else value


def _revision_changes(revision: SampleRevision) -> list[tuple[str, str, str]]:
    """(field, old, new) for each field a revision changed; a creation lists its status."""
    if not revision.before:
        keys = ["status"] if "status" in revision.after else []
    else:
        keys = list(revision.after)
    names = {
        f.name: str(f.verbose_name) for f in Sample._meta.get_fields() if hasattr(f, "verbose_name")
    }
    changes = []
    for key in keys:
        if key == CUSTOM_KEY:
            changes += _custom_changes(revision.before.get(key) or {}, revision.after.get(key))
            continue
        changes.append(
            (
                names.get(key, key),
                _shown(_status_label(key, revision.before.get(key))) if revision.before else "",
                _shown(_status_label(key, revision.after.get(key))),
            )
        )
    return changes


# The key under which a revision keeps the custom fields (``extra`` keys) it changed.
CUSTOM_KEY = "extra"


def _custom_changes(before: Any, after: Any) -> list[tuple[str, str, str]]:
    """(field, old, new) per custom field a re-import changed; a dropped one is "(removed)"."""
    was = before if isinstance(before, dict) else {}
    now = after if isinstance(after, dict) else {}
    return [
        (
            _("custom field “%(key)s”") % {"key": key},
            _shown(_custom_text(was[key])) if key in was else _("(none)"),
            _shown(_custom_text(now[key])) if key in now else _("(removed)"),
        )
        for key in dict.fromkeys([*was, *now])
    ]


def _custom_text(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value


def _media_user(request: HttpRequest):  # type: ignore[no-untyped-def]
    if request.user.is_authenticated:
        return request.user
    try:
        result = TokenAuthentication().authenticate(request)  # type: ignore[arg-type]
    except AuthenticationFailed:
        return None
    return result[0] if result else None


def _derivative_type(name: str) -> str:
    """A WEBP or JPEG made by the worker, or the image itself (a small one is its own
    thumbnail)."""
    return mimetypes.guess_type(name)[0] or "image/webp"


@login_not_required
@require_GET
def media_file(request: HttpRequest, asset_id: int, variant: str = "original") -> HttpResponseBase:
    """Serve a media file to a user who may see it: streamed locally, or redirected to S3.

    Anonymous requests get 401, users without access 404 (the asset's existence is not shown).
    """
    user = _media_user(request)
    if user is None:
        return HttpResponse(_("Log in to see media."), status=401, content_type="text/plain")
    asset = selectors.media_asset_get_visible(user=user, asset_id=asset_id)
    if asset is None:
        raise Http404(_("No such media file."))
    if variant == "thumbnail":
        if not asset.thumbnail:
            raise Http404(_("The thumbnail is not ready yet."))
        name, content_type = asset.thumbnail.name, _derivative_type(asset.thumbnail.name)
    elif variant == "display" and asset.display:
        name, content_type = asset.display.name, _derivative_type(asset.display.name)
    else:  # the original; also the display image of one no larger than the viewer needs
        name, content_type = asset.file.name, asset.mime_type
    if hasattr(default_storage, "bucket_name"):
        return HttpResponseRedirect(default_storage.url(name))
    handle = default_storage.open(name, "rb")
    size = default_storage.size(name)
    return ranged_file_response(request, handle, size=size, content_type=content_type)
