"""The workbench: one sample's review form (with its keys, draft and media), and the form
posted without the page's script."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from annotation import selectors as annotation_selectors
from core.roles import ANNOTATOR, is_lead, request_user, require_reviewer
from review import editing, selectors, services
from review import work as review_work
from review.forms import ReviewSubmitForm, field_labels
from review.models import RejectReason
from review.queue import services as queue_services


def _wide(images: list[Any]) -> bool:
    """Whether the first image is a wide one (a line of text, a strip of panels): the
    workbench then gives it the width of two columns, so its text reads at full size."""
    asset = images[0].asset if images else None
    return bool(asset and asset.width and asset.height and asset.width >= 1.6 * asset.height)


def _predicate_text(values: dict[str, Any]) -> str:
    return "\n".join(str(c) for c in values.get("predicate") or [])


@never_cache
@require_GET
def workbench(request: HttpRequest, sample_id: int) -> HttpResponse:
    """The review form; once the user submitted their review of the sample (coming back to
    it, by the browser's Back too), the page says so and links onward: the form opens again
    only to amend (``?amend=1``) while the sample waits for the other reviews. Never cached,
    so Back fetches it again instead of showing the form as it was."""
    require_reviewer(request)
    user = request_user(request)
    bench = selectors.workbench_get(user=user, sample_id=sample_id, role=ANNOTATOR)
    if bench is None:
        raise Http404(_("No such sample."))
    sample = bench.sample
    if bench.submitted is not None and not (request.GET.get("amend") and bench.my_review):
        return render(
            request,
            "review/submitted.html",
            {
                "bench": bench,
                "sample": sample,
                "review": bench.submitted,
                "labels": field_labels(preset=sample.dataset.preset),
                "feedback": selectors.gold_feedback_get(submitted=bench.submitted),
            },
        )
    return render(request, "review/workbench.html", workbench_context(request, bench))


def workbench_context(
    request: HttpRequest, bench: selectors.Workbench, *, ahead: bool = False
) -> dict[str, Any]:
    """What the workbench template shows of ``bench``. ``ahead``: the page of a sample reserved
    for the reviewer (``review.workbench.ahead_views``), shown once their current review is in; its
    lease is theirs only then, and their count of reviews one more."""
    user = request_user(request)
    sample = bench.sample
    peaks = [link.asset.peaks for link in bench.audio]
    mine = bench.my_review
    urls = {
        "draft": reverse("api_review_draft", args=[sample.pk]),
        "reviews": reverse("api_reviews"),
        "claim": reverse("api_review_claim", args=[sample.dataset_id]),
        "skip": reverse("api_review_skip", args=[sample.pk]),
        "comments": reverse("api_review_comments", args=[sample.pk]),
        "queue": reverse("review:queue", args=[sample.dataset_id]),
        "mine": reverse("review:mine"),
    }
    if mine is not None:
        urls["amend"] = reverse("api_review_amend", args=[mine.pk])
    elif bench.lease is not None or ahead:
        urls |= {
            "ahead": reverse("review:ahead", args=[sample.dataset_id]),
            "take": reverse("review:ahead_take"),
            "release": reverse("review:ahead_release"),
        }
    undo = None
    # A page reserved ahead is shown once the review before it is in: that review is the one
    # to undo, and the script learns it when the server has it.
    if mine is None and not ahead:
        last = review_work.last_review_amendable(reviewer=user, dataset=sample.dataset)
        if last is not None and last.sample_id != sample.pk:
            url = reverse("review:workbench", args=[last.sample_id])
            undo = {"url": f"{url}?amend=1&undo=1", "label": last.sample.external_id}
    config = {
        "sampleId": sample.pk,
        "externalId": sample.external_id,
        "datasetId": sample.dataset_id,
        "kind": sample.dataset.kind,
        "leaseHeld": bench.lease is not None,
        "serverDraft": bench.draft,
        "peaks": peaks[0] if peaks else None,
        # What the sample holds: only fields that differ from it are sent as edits.
        "initial": {name: getattr(sample, name) for name in bench.fields},
        "urls": urls,
        "undo": undo,
        # Reopened by undo, the amended review leads back to the reviewer's lease.
        "afterAmend": "next" if mine is not None and request.GET.get("undo") else "mine",
        "strings": {
            "saved": _("Draft saved"),
            "savedLocally": _("Offline: draft kept in this browser"),
            "restored": _("Your draft was restored"),
            "submitting": _("Submitting…"),
            "submitted": _("Review submitted"),
            "failed": _("Could not submit; your draft is kept. Try again."),
            "nothingLeft": _("Nothing is left for you to review here."),
            "needReason": _("Choose a reject reason (i, d, o, l)."),
            "needSkipReason": _("Say why you skip this sample."),
            "noDecision": _("Accept (a) or reject (x) first."),
            "pendingFailed": _("Your review of %(sample)s was not saved: %(reason)s"),
            "retry": _("Try again"),
            "openIt": _("Open it"),
            "discard": _("Discard it"),
            "pendingFirst": _("Save your earlier review first (see above)."),
            "offline": _("The server could not be reached."),
            "nothingToUndo": _("No submission of yours here can still be changed."),
        },
    }
    work = review_work.reviewer_work(reviewer=user, dataset_ids=[sample.dataset_id])
    return {
        "bench": bench,
        "sample": sample,
        "config": config,
        "labels": field_labels(preset=sample.dataset.preset),
        "reject_reasons": [c for c in RejectReason.choices if c[0]],
        "ratings": range(1, 6),
        "predicate_text": _predicate_text(bench.form_values),
        "work": work.get(sample.dataset_id),
        # The reserved sample is shown after the current review is in: one more done.
        "position": (work[sample.dataset_id].done + (2 if ahead else 1))
        if sample.dataset_id in work
        else None,
        "ahead": ahead,
        "undo": undo,
        "client_uuid": uuid.uuid4(),
        "wide_media": _wide(bench.images),
        "is_lead": is_lead(request.user),
    }


@require_POST
def review_post(request: HttpRequest, sample_id: int) -> HttpResponse:
    """The review form posted without the page's script: submit, then open the next sample
    (or the submitted page, which shows a gold item's feedback). A refused review goes back
    to the workbench with the reason."""
    require_reviewer(request)
    user = request_user(request)
    sample = annotation_selectors.sample_get_visible(user=user, sample_id=sample_id, role=ANNOTATOR)
    if sample is None:
        raise Http404(_("No such sample."))
    form = ReviewSubmitForm(request.POST, fields=editing.reviewable_fields(sample.dataset.kind))
    back = redirect("review:workbench", sample_id=sample.pk)
    if not form.is_valid():
        for field, errors in form.errors.items():
            label = form.fields[field].label if field in form.fields else None
            for error in errors:
                messages.error(request, f"{label}: {error}" if label else str(error))
        return back
    data = dict(form.cleaned_data)
    try:
        result = services.review_submit(reviewer=user, sample=sample, values=form.values(), **data)
    except ValidationError as exc:
        for error in exc.messages:
            messages.error(request, error)
        return back
    messages.success(request, _("Review submitted"))
    if selectors.gold_feedback_get(submitted=result.review) is not None:
        return back
    lease = queue_services.slot_claim(dataset=sample.dataset, reviewer=user)
    if lease is None:
        messages.info(request, _("Nothing is left for you to review here."))
        return redirect("review:queue", dataset_id=sample.dataset_id)
    return redirect("review:workbench", sample_id=lease.sample_id)
