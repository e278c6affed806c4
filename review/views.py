"""HTML pages of the review app: the queue, the workbench, adjudication and progress."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import selectors as annotation_selectors
from annotation.lookups import dataset_or_404
from core.roles import ANNOTATOR, is_lead, is_reviewer, request_user, require_lead
from review import consensus, consensus_selectors, selectors, services
from review import work as review_work
from review.forms import AdjudicationForm, ReviewSettingsForm, ReviewSubmitForm, field_labels
from review.models import Decision, RejectReason

REVIEWERS_ONLY = gettext_lazy("Only annotators may claim or submit review work.")


def _require_reviewer(request: HttpRequest) -> None:
    if not is_reviewer(request.user):
        raise PermissionDenied(REVIEWERS_ONLY)


@require_GET
def dataset_queue(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = dataset_or_404(request, dataset_id)
    overview = selectors.queue_overview(dataset=dataset, reviewer=request_user(request))
    settings = overview.settings
    form = ReviewSettingsForm(
        initial={
            "overlap": settings.overlap,
            "blind": settings.blind,
            "show_judge_hints": settings.show_judge_hints,
            "lease_minutes": max(settings.lease_seconds // 60, 1),
            "gold_percent": round(settings.gold_rate * 100, 2),
            "gold_feedback": settings.gold_feedback,
            "min_gold_accuracy_percent": round(settings.min_gold_accuracy * 100, 2),
            "min_gold_items": settings.min_gold_items,
        }
    )
    return render(
        request,
        "review/queue.html",
        {
            "dataset": dataset,
            "overview": overview,
            "settings_form": form,
            "is_lead": is_lead(request.user),
            "can_review": is_reviewer(request.user)
            and annotation_selectors.dataset_role_allows(
                user=request.user, dataset=dataset, role=ANNOTATOR
            ),
        },
    )


@require_POST
def settings_update(request: HttpRequest, dataset_id: int) -> HttpResponse:
    require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    form = ReviewSettingsForm(request.POST)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, str(error))
        return redirect("review:queue", dataset_id=dataset.pk)
    data = form.cleaned_data
    try:
        services.review_settings_update(
            dataset=dataset,
            overlap=data["overlap"],
            blind=data["blind"],
            show_judge_hints=data["show_judge_hints"],
            lease_seconds=data["lease_minutes"] * 60,
            gold_rate=None if data["gold_percent"] is None else data["gold_percent"] / 100,
            gold_feedback=data["gold_feedback"],
            min_gold_accuracy=None
            if data["min_gold_accuracy_percent"] is None
            else data["min_gold_accuracy_percent"] / 100,
            min_gold_items=data["min_gold_items"],
        )
    except ValidationError as exc:
        for error in exc.messages:
            messages.error(request, error)
    else:
        messages.success(request, _("Review settings saved."))
    return redirect("review:queue", dataset_id=dataset.pk)


@require_POST
def queue_fill(request: HttpRequest, dataset_id: int) -> HttpResponse:
    require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    created = services.queue_sync(dataset=dataset)
    messages.success(request, _("Queue refreshed: %(n)d new review slots.") % {"n": created})
    return redirect("review:queue", dataset_id=dataset.pk)


@require_POST
def claim_next(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Lease the next sample and open it; back to the queue when nothing is left."""
    _require_reviewer(request)
    dataset = dataset_or_404(request, dataset_id, role=ANNOTATOR, refusal=REVIEWERS_ONLY)
    sample_id: int | None = None
    if request.POST.get("sample"):
        try:
            sample_id = int(request.POST["sample"])
        except ValueError as exc:
            raise Http404(_("No such sample.")) from exc
    lease = services.slot_claim(
        dataset=dataset,
        reviewer=request_user(request),
        skipped=request.POST.get("skipped") == "1",
        sample_id=sample_id,
    )
    if lease is None:
        messages.info(request, _("Nothing is left for you to review here."))
        return redirect("review:queue", dataset_id=dataset.pk)
    return redirect("review:workbench", sample_id=lease.sample_id)


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
    _require_reviewer(request)
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
    for the reviewer (``review.ahead_views``), shown once their current review is in; its
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
        "client_uuid": uuid.uuid4(),
        "wide_media": _wide(bench.images),
        "is_lead": is_lead(request.user),
    }


@require_POST
def review_post(request: HttpRequest, sample_id: int) -> HttpResponse:
    """The review form posted without the page's script: submit, then open the next sample
    (or the submitted page, which shows a gold item's feedback). A refused review goes back
    to the workbench with the reason."""
    _require_reviewer(request)
    user = request_user(request)
    sample = annotation_selectors.sample_get_visible(user=user, sample_id=sample_id, role=ANNOTATOR)
    if sample is None:
        raise Http404(_("No such sample."))
    form = ReviewSubmitForm(request.POST, fields=consensus.reviewable_fields(sample.dataset.kind))
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
    lease = services.slot_claim(dataset=sample.dataset, reviewer=user)
    if lease is None:
        messages.info(request, _("Nothing is left for you to review here."))
        return redirect("review:queue", dataset_id=sample.dataset_id)
    return redirect("review:workbench", sample_id=lease.sample_id)


@require_GET
def adjudication_list(request: HttpRequest, dataset_id: int) -> HttpResponse:
    require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    page = Paginator(selectors.adjudication_queue(dataset=dataset), 25).get_page(
        request.GET.get("page")
    )
    reviews = selectors.reviews_by_sample(sample_ids=[s.pk for s in page.object_list])
    rows = [(sample, reviews.get(sample.pk, [])) for sample in page.object_list]
    flagged = consensus_selectors.flagged_reviewer_ids(dataset=dataset)
    return render(
        request,
        "review/adjudication_list.html",
        {"dataset": dataset, "page": page, "rows": rows, "flagged": flagged},
    )


@never_cache
@require_http_methods(["GET", "POST"])
def adjudicate(request: HttpRequest, sample_id: int) -> HttpResponse:
    """The adjudication form. Once the sample is adjudicated, coming back to it (Back
    included: the page is never cached) shows the decision instead of a live form, and the
    form posted again is not applied twice; ``?again=1`` opens the form to change it."""
    require_lead(request)
    bench = selectors.workbench_get(user=request_user(request), sample_id=sample_id)
    if bench is None:
        raise Http404(_("No such sample."))
    sample = bench.sample
    done = selectors.adjudication_done(sample=sample)
    posted_revision = request.POST.get("revision", "") if request.method == "POST" else ""
    stale = bool(posted_revision) and posted_revision != str(sample.revision)
    if done is not None and (stale or (request.method == "GET" and not request.GET.get("again"))):
        if stale:
            messages.warning(
                request, _("This sample was already adjudicated; your form was not saved again.")
            )
        return render(
            request,
            "review/adjudicated.html",
            {"sample": sample, "outcome": done},
            status=409 if stale else 200,
        )
    initial: dict[str, Any] = {"decision": Decision.ACCEPT, "revision": sample.revision}
    for name in bench.fields:
        value = getattr(sample, name)
        initial[f"value_{name}"] = "\n".join(value) if name == "predicate" else value
    labels = field_labels(preset=sample.dataset.preset)
    form = AdjudicationForm(
        request.POST or None,
        initial=initial,
        fields=bench.fields,
        term_fields=bench.term_fields,
        labels=labels,
    )
    if stale:
        # The sample changed under the form (not by an adjudication): show it as it is now.
        form = AdjudicationForm(
            None, initial=initial, fields=bench.fields, term_fields=bench.term_fields, labels=labels
        )
        messages.error(request, _("The sample changed since this form was opened; check it again."))
    elif request.method == "POST" and form.is_valid():
        try:
            services.sample_adjudicate(
                sample=sample,
                by=request_user(request),
                decision=form.cleaned_data["decision"],
                values=form.values(),
                reject_reason=form.cleaned_data["reject_reason"],
                note=form.cleaned_data["note"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Adjudicated."))
            _warn_same_pair_label(request, sample)
            return redirect("review:adjudication_list", dataset_id=sample.dataset_id)
    reviews = selectors.reviews_by_sample(sample_ids=[sample.pk]).get(sample.pk, [])
    side_rows = [
        (
            labels[name],
            getattr(sample, name),
            [
                (r.values.get(name, getattr(sample, name)), name in r.values)
                if r.decision == Decision.ACCEPT
                else ("—", False)
                for r in reviews
            ],
        )
        for name in bench.fields
    ]
    return render(
        request,
        "review/adjudicate.html",
        {
            "bench": bench,
            "sample": sample,
            "form": form,
            "reviews": reviews,
            "side_rows": side_rows,
            "labels": labels,
            "pair_labels": _pair_label_choices(sample, reviews),
        },
    )


def _pair_label_choices(sample: Any, reviews: list[Any]) -> list[str]:
    """The labels (current or proposed by a reviewer) that would give both members of a
    tri-modal pair the same label: the adjudication page warns about them."""
    pair = sample.pair if sample.pair_id else None
    if pair is None or not pair.safety_label:
        return []
    proposed = {sample.safety_label} | {r.values.get("safety_label", "") for r in reviews}
    return [label for label in sorted(proposed) if label == pair.safety_label]


def _warn_same_pair_label(request: HttpRequest, sample: Any) -> None:
    if not sample.pair_id or sample.pair is None:
        return
    if sample.safety_label and sample.safety_label == sample.pair.safety_label:
        messages.warning(
            request,
            _("%(a)s and its pair %(b)s are now both labelled “%(label)s”.")
            % {
                "a": sample.external_id,
                "b": sample.pair.external_id,
                "label": sample.get_safety_label_display(),
            },
        )


@require_GET
def progress(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = dataset_or_404(request, dataset_id)
    return render(
        request,
        "review/progress.html",
        {
            "dataset": dataset,
            "progress": selectors.progress_get(dataset=dataset),
            "is_lead": is_lead(request.user),
        },
    )


@require_GET
def my_reviews(request: HttpRequest) -> HttpResponse:
    """The reviews the signed-in user submitted, newest first; each can be reopened and
    amended while its sample waits for the other reviews."""
    reviews = review_work.my_reviews(reviewer=request_user(request))
    page = Paginator(reviews, 50).get_page(request.GET.get("page"))
    return render(request, "review/my_reviews.html", {"page": page})
