"""HTML pages of the calibration audit: audit sets, the new-set planner, the rating form and the
statistics (page, CSV, printable report). Auditors and leads of the dataset only."""

from __future__ import annotations

import time
import uuid
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.lookups import dataset_or_404
from annotation.models import Dataset
from core import charts
from core import csv as safe_csv
from core.roles import AUDITOR, acting_user, is_auditor, is_lead, request_user, require_lead
from judging.audit import computations, planner, rubric, selectors, services
from judging.audit.forms import AuditRatingPostForm, AuditSetForm
from judging.audit.statistics import statistics_rows
from judging.models import AuditSet

MAX_SETS_SHOWN = 50


AUDITORS_ONLY = gettext_lazy("Only auditors and project leads may see the audit.")


def require_auditor(request: HttpRequest) -> None:
    if not is_auditor(request.user):
        raise PermissionDenied(AUDITORS_ONLY)


def _dataset(request: HttpRequest, dataset_id: int) -> Dataset:
    require_auditor(request)
    return dataset_or_404(request, dataset_id, role=AUDITOR, refusal=AUDITORS_ONLY)


def audit_set_for(request: HttpRequest, audit_set_id: int) -> AuditSet:
    require_auditor(request)
    audit_set = selectors.audit_set_get_visible(user=request.user, audit_set_id=audit_set_id)
    if audit_set is None:
        raise Http404(_("No such audit set."))
    return audit_set


@require_GET
def audit_list(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = _dataset(request, dataset_id)
    return render(
        request,
        "judging/audit_list.html",
        {
            "dataset": dataset,
            "audit_sets": selectors.audit_set_list(dataset=dataset)[:MAX_SETS_SHOWN],
            "is_lead": is_lead(request.user),
        },
    )


@require_http_methods(["GET", "POST"])
def audit_new(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Plan an audit set: the margins of every allocation first (a GET, from the frame's stored
    strata), then draw (a POST of the previewed design)."""
    dataset = _dataset(request, dataset_id)
    require_lead(request)
    bound = request.POST if request.method == "POST" else (request.GET or None)
    form = AuditSetForm(bound)
    plan = None
    if form.is_valid():
        data = form.cleaned_data
        plan = planner.audit_plan(
            dataset=dataset,
            task=data["task"],
            size=data["size"],
            method=data["method"],
            floor=data["floor"],
        )
        if request.method == "POST":
            data = dict(form.cleaned_data)
            name = data.pop("name") or _("Audit %(task)s, seed %(seed)d") % {
                "task": data["task"],
                "seed": data["seed"],
            }
            try:
                audit_set = services.audit_set_create(
                    dataset=dataset, name=name, by=acting_user(request.user), **data
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                messages.success(request, _("The audit set is being drawn in the background."))
                return redirect("judging:audit_detail", audit_set_id=audit_set.pk)
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "judging/audit_new.html",
        {"dataset": dataset, "form": form, "plan": plan},
        status=status,
    )


@require_GET
def audit_detail(request: HttpRequest, audit_set_id: int) -> HttpResponse:
    audit_set = audit_set_for(request, audit_set_id)
    return render(
        request,
        "judging/audit_detail.html",
        {
            "audit_set": audit_set,
            "dataset": audit_set.dataset,
            "progress": selectors.audit_progress(audit_set=audit_set),
            "is_lead": is_lead(request.user),
        },
    )


@require_POST
def audit_retry(request: HttpRequest, audit_set_id: int) -> HttpResponse:
    require_lead(request)
    audit_set = audit_set_for(request, audit_set_id)
    try:
        services.audit_set_retry(audit_set=audit_set)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("judging:audit_detail", audit_set_id=audit_set.pk)


@require_POST
def audit_next(request: HttpRequest, audit_set_id: int) -> HttpResponse:
    """Lease the next item and open its form; back to the audit set when nothing is left."""
    audit_set = audit_set_for(request, audit_set_id)
    lease = services.audit_claim(audit_set=audit_set, auditor=request.user)  # type: ignore[arg-type]
    if lease is None:
        messages.info(request, _("Nothing is left for you to rate in this audit set."))
        return redirect("judging:audit_detail", audit_set_id=audit_set.pk)
    return redirect("judging:audit_rate", item_id=lease.item_id)


@never_cache
@require_GET
def audit_rate(request: HttpRequest, item_id: int) -> HttpResponse:
    """The rating form: the item as the judges saw it, never the judges' verdicts."""
    require_auditor(request)
    view = selectors.audit_item_for_rating(user=request.user, item_id=item_id)  # type: ignore[arg-type]
    if view is None:
        raise Http404(_("No such audit item."))
    return render(request, "judging/audit_rate.html", rating_context(view))


def rating_context(view: selectors.RatingItem, *, ahead: bool = False) -> dict[str, Any]:
    """What the rating page shows of ``view``. ``ahead``: the page of an item reserved for the
    auditor (``judging.audit.ahead_views``), shown once their current rating is in; its lease
    is theirs only then."""
    audit_set = view.item.audit_set
    fields = rubric.form_fields(audit_set.task)
    links = list(view.sample.media_links.all())
    images = [link for link in links if link.role == "image"]
    audio = [link for link in links if link.role == "audio"]
    submission_uuid = uuid.uuid4()
    urls = {
        "ratings": reverse("api_audit_ratings"),
        "claim": reverse("api_audit_claim", args=[audit_set.pk]),
        "detail": reverse("judging:audit_detail", args=[audit_set.pk]),
    }
    if view.rating is None and (view.lease is not None or ahead):
        urls |= {
            "ahead": reverse("judging:audit_ahead", args=[audit_set.pk]),
            "take": reverse("judging:audit_ahead_take"),
            "release": reverse("judging:audit_ahead_release"),
        }
    config = {
        "itemId": view.item.pk,
        "task": audit_set.task,
        "leaseHeld": view.lease is not None,
        "alreadyRated": view.rating is not None,
        "submissionUuid": str(submission_uuid),
        "peaks": next((link.asset.peaks for link in audio if link.asset.peaks), None),
        "fields": [
            {"name": f["name"], "keys": {c["key"]: c["value"] for c in f["choices"]}}
            for f in fields
        ],
        "urls": urls,
        "strings": {
            "submitting": _("Submitting…"),
            "submitted": _("Rating saved"),
            "failed": _("Could not save the rating; try again."),
            "incomplete": _("Rate every field first (the keys are shown beside each choice)."),
            "nothingLeft": _("Nothing is left for you to rate in this audit set."),
            "pendingFailed": _("Your rating of an earlier item was not saved: %(reason)s"),
            "offline": _("The server could not be reached."),
            "pendingFirst": _("Save your earlier rating first (see above)."),
            "retry": _("Try again"),
            "openIt": _("Open it"),
            "discard": _("Discard it"),
        },
    }
    return {
        "view": view,
        "audit_set": audit_set,
        "sample": view.sample,
        "response": view.response,
        "images": images,
        "audio": audio,
        "fields": fields,
        "config": config,
        "ahead": ahead,
        "submission_uuid": submission_uuid,
        "shown_at": int(time.time()),
    }


@require_POST
def audit_submit(request: HttpRequest, item_id: int) -> HttpResponse:
    """The rating form posted without the page's script: save the rating, then open the next
    item (or the audit set when nothing is left). A refused rating goes back to its form with
    the reason."""
    require_auditor(request)
    user = request_user(request)
    view = selectors.audit_item_for_rating(user=user, item_id=item_id)
    if view is None:
        raise Http404(_("No such audit item."))
    item = view.item
    back = redirect("judging:audit_rate", item_id=item.pk)
    form = AuditRatingPostForm(request.POST)
    if not form.is_valid():
        for field, errors in form.errors.items():
            label = form.fields[field].label if field in form.fields else None
            for error in errors:
                messages.error(request, f"{label}: {error}" if label else str(error))
        return back
    data = form.cleaned_data
    shown_at = data["shown_at"]
    try:
        services.audit_rating_submit(
            auditor=user,
            item=item,
            submission_uuid=data["submission_uuid"],
            note=data["note"],
            seconds_spent=time.time() - shown_at if shown_at else 0.0,
            **rubric.posted_values(item.audit_set.task, request.POST),
        )
    except services.AuditConflict as exc:
        messages.info(request, " ".join(exc.messages))
    except ValidationError as exc:
        for error in exc.messages:
            messages.error(request, error)
        return back
    else:
        messages.success(request, _("Rating saved"))
    lease = services.audit_claim(audit_set=item.audit_set, auditor=user)
    if lease is None:
        messages.info(request, _("Nothing is left for you to rate in this audit set."))
        return redirect("judging:audit_detail", audit_set_id=item.audit_set_id)
    return redirect("judging:audit_rate", item_id=lease.item_id)


def _figures_view(stats: dict[str, Any]) -> dict[str, Any]:
    """The statistics with the geometry of their pictures."""
    blocks = []
    for block in stats["human_judge"]:
        ensemble = next((c for c in block["overall"] if c["rater"] == "ensemble"), None)
        by_category = block["breakdowns"].get("category", {})
        forest_rows = [
            {"label": group, "figure": raters["ensemble"]["cohen_kappa"]}
            for group, raters in sorted(by_category.items())
            if "ensemble" in raters
        ]
        distribution = None
        if ensemble is not None:
            confusion = ensemble["confusion"]
            distribution = charts.distribution(
                block["labels"],
                [sum(row) for row in confusion],
                [sum(col) for col in zip(*confusion, strict=True)],
            )
        blocks.append(
            {
                "block": block,
                "heatmaps": [
                    (c, charts.heatmap(c["confusion"], block["labels"])) for c in block["overall"]
                ],
                "forest": charts.forest(forest_rows) if forest_rows else None,
                "distribution": distribution,
            }
        )
    reliability = []
    if stats["calibration"]:
        reliability = [
            (judge, charts.reliability(judge["bins"])) for judge in stats["calibration"]["judges"]
        ]
    pairwise = []
    for block in stats["inter_judge"]:
        judges = stats["judges"]
        lookup = {(p["a"], p["b"]): p for p in block["cohen_pairwise"]}
        lookup.update({(p["b"], p["a"]): p for p in block["cohen_pairwise"]})
        pairwise.append(
            {
                "block": block,
                "matrix": [(a, [(b, lookup.get((a, b))) for b in judges]) for a in judges],
            }
        )
    return {"human_judge": blocks, "reliability": reliability, "inter_judge": pairwise}


def _statistics_context(request: HttpRequest, audit_set_id: int) -> dict[str, Any]:
    """The stored figures (computed by a worker, never here) and the state of their update."""
    audit_set = audit_set_for(request, audit_set_id)
    stored = computations.audit_statistics_read(audit_set=audit_set)
    stats = stored.result
    return {
        "audit_set": audit_set,
        "dataset": audit_set.dataset,
        "stored": stored,
        "stats": stats,
        "figures": _figures_view(stats) if stats is not None else None,
    }


@require_GET
def audit_statistics(request: HttpRequest, audit_set_id: int) -> HttpResponse:
    return render(
        request, "judging/audit_statistics.html", _statistics_context(request, audit_set_id)
    )


@require_GET
def audit_report(request: HttpRequest, audit_set_id: int) -> HttpResponse:
    """The statistics as a printable page (print styles, no site chrome)."""
    return render(request, "judging/audit_report.html", _statistics_context(request, audit_set_id))


@require_GET
def audit_statistics_csv(request: HttpRequest, audit_set_id: int) -> HttpResponse:
    audit_set = audit_set_for(request, audit_set_id)
    stats = computations.audit_statistics_read(audit_set=audit_set).result
    if stats is None:
        waiting = HttpResponse(
            _("The figures are being computed; try again in a moment."),
            content_type="text/plain; charset=utf-8",
            status=503,
        )
        waiting["Retry-After"] = "10"
        return waiting
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="audit-{audit_set.pk}-statistics.csv"'
    writer = safe_csv.writer(response)
    for row in statistics_rows(stats):
        writer.writerow(["" if value is None else value for value in row])
    return response
