"""HTML pages of the review app: the queue, the workbench, adjudication and progress."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import extensions as annotation_extensions
from annotation import selectors as annotation_selectors
from annotation.lookups import dataset_or_404
from core.roles import (
    ANNOTATOR,
    REVIEWERS_ONLY,
    is_lead,
    is_reviewer,
    request_user,
    require_lead,
    require_reviewer,
)
from review import selectors, services
from review import work as review_work
from review.exclusions import selectors as consensus_selectors
from review.forms import AdjudicationForm, ReviewSettingsForm, field_labels
from review.models import Decision
from review.queue import services as queue_services


def sample_assignments_panel(*, user: Any, sample: Any) -> dict[str, Any] | None:
    """The sample page's card, for leads, of the people it is assigned to and whether each
    can still take it (nothing when it is assigned to nobody)."""
    if not is_lead(user):
        return None
    assignments = selectors.sample_assignments(sample=sample)
    return {"assignments": assignments} if assignments else None


def sample_reviews_panel(*, user: Any, sample: Any) -> dict[str, Any] | None:
    """The sample page's card of its reviews side by side, those the user may see (nothing
    when there are none)."""
    reviews = selectors.sample_reviews_visible(user=user, sample=sample)
    return {"reviews": reviews} if reviews else None


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
        queue_services.review_settings_update(
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
    created = queue_services.queue_sync(dataset=dataset)
    messages.success(request, _("Queue refreshed: %(n)d new review slots.") % {"n": created})
    return redirect("review:queue", dataset_id=dataset.pk)


@require_POST
def claim_next(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Lease the next sample and open it; back to the queue when nothing is left."""
    require_reviewer(request)
    dataset = dataset_or_404(request, dataset_id, role=ANNOTATOR, refusal=REVIEWERS_ONLY)
    sample_id: int | None = None
    if request.POST.get("sample"):
        try:
            sample_id = int(request.POST["sample"])
        except ValueError as exc:
            raise Http404(_("No such sample.")) from exc
    lease = queue_services.slot_claim(
        dataset=dataset,
        reviewer=request_user(request),
        skipped=request.POST.get("skipped") == "1",
        sample_id=sample_id,
    )
    if lease is None:
        messages.info(request, _("Nothing is left for you to review here."))
        return redirect("review:queue", dataset_id=dataset.pk)
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
            form.add_service_error(exc)
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
            # The cards other apps add (the models' responses and the judges' verdicts).
            "panels": annotation_extensions.sample_panels(
                user=request.user, sample=sample, adjudication=True
            ),
        },
        # A refused post (malformed, or a verified sample left without a required field).
        status=400 if request.method == "POST" and not stale and form.errors else 200,
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
            "progress": selectors.progress_get(dataset=dataset, user=request.user),
            "is_lead": is_lead(request.user),
            "sees_every_reviewer": selectors.sees_every_reviewer(request.user),
        },
    )


@require_GET
def my_reviews(request: HttpRequest) -> HttpResponse:
    """The reviews the signed-in user submitted, newest first; each can be reopened and
    amended while its sample waits for the other reviews."""
    reviews = review_work.my_reviews(reviewer=request_user(request))
    page = Paginator(reviews, 50).get_page(request.GET.get("page"))
    return render(request, "review/my_reviews.html", {"page": page})
