"""Pages of gold items: a lead marks a sample as gold from its page, or the samples ticked on
the sample list in bulk (only verified samples may be gold; see ``review.gold.services``),
unmarks them the same ways, and lists them with the reviewers' agreement with each."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from annotation import selectors as annotation_selectors
from annotation.lookups import dataset_or_404
from annotation.models import Dataset, Sample
from annotation.sample_filters import SampleFilter
from core.roles import is_lead, request_user, require_lead
from review import selectors
from review.gold import services as gold_services

BULK_MAX = 10_000
PAGE_SIZE = 50


def sample_gold_panel(*, user: Any, sample: Sample) -> dict[str, Any] | None:
    """What the sample page shows a lead about gold (nothing to anyone else: reviewers must
    not learn which samples are gold)."""
    if not is_lead(user):
        return None
    return {
        "item": selectors.gold_item_get(sample=sample),
        "markable": sample.status in gold_services.GOLD_STATUSES,
        "served": gold_services.gold_item_served(sample=sample),
    }


def _sample(request: HttpRequest, sample_id: int) -> Sample:
    sample = annotation_selectors.sample_get_visible(
        user=request.user, sample_id=sample_id, with_media=False
    )
    if sample is None:
        raise Http404(_("No such sample."))
    return sample


@require_POST
def gold_mark(request: HttpRequest, sample_id: int) -> HttpResponse:
    """Mark the sample as gold with its current values as the expected answer."""
    require_lead(request)
    sample = _sample(request, sample_id)
    try:
        gold_services.gold_mark(
            sample=sample,
            by=request_user(request),
            explanation=request.POST.get("explanation", ""),
            attention_check=request.POST.get("attention_check") == "on",
        )
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
    else:
        messages.success(request, _("Marked as a gold item."))
    return redirect("annotation:sample_detail", sample_id=sample.pk)


@require_POST
def gold_unmark(request: HttpRequest, sample_id: int) -> HttpResponse:
    require_lead(request)
    sample = _sample(request, sample_id)
    if gold_services.gold_unmark(sample=sample):
        messages.success(request, _("No longer a gold item."))
    return redirect("annotation:sample_detail", sample_id=sample.pk)


def _bulk_chosen(
    request: HttpRequest, dataset_id: int, too_many: str
) -> tuple[Dataset, str, list[int] | None]:
    """The dataset, the URL back to the list (its filter kept), and the sample ids a bulk
    gold button chose (the ticked ones, or every one the filter matches); None, with an error
    message added, when it chose none or too many."""
    dataset = dataset_or_404(request, dataset_id)
    filter = SampleFilter.from_params(request.POST)
    query = urlencode(filter.to_params())
    back = reverse("annotation:sample_list", args=[dataset.pk]) + (f"?{query}" if query else "")
    ids: list[int] | None = None
    if request.POST.get("scope") != "all":
        ids = [int(raw) for raw in request.POST.getlist("ids") if raw.isdigit()]
        if not ids:
            messages.error(request, _("Tick some samples first, or choose every matching sample."))
            return dataset, back, None
    samples = annotation_selectors.samples_selected(dataset=dataset, filter=filter, ids=ids)
    chosen = list(samples.values_list("pk", flat=True)[: BULK_MAX + 1])
    if len(chosen) > BULK_MAX:
        messages.error(request, too_many % {"n": f"{BULK_MAX:,}"})
        return dataset, back, None
    return dataset, back, chosen


@require_POST
def gold_mark_bulk(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """The sample list's "Mark as gold": the ticked samples, or every matching one."""
    require_lead(request)
    dataset, back, chosen = _bulk_chosen(
        request, dataset_id, _("Mark at most %(n)s samples as gold at once; narrow the filter.")
    )
    if chosen is None:
        return redirect(back)
    result = gold_services.gold_mark_bulk(
        dataset=dataset, sample_ids=chosen, by=request_user(request)
    )
    messages.success(
        request,
        ngettext(
            "%(n)d sample marked as a gold item.",
            "%(n)d samples marked as gold items.",
            result.marked,
        )
        % {"n": result.marked},
    )
    if result.refused:
        shown = ", ".join(result.refused[:10]) + (" …" if len(result.refused) > 10 else "")
        messages.warning(
            request,
            ngettext(
                "%(n)d sample is not verified and was not marked: %(ids)s.",
                "%(n)d samples are not verified and were not marked: %(ids)s.",
                len(result.refused),
            )
            % {"n": len(result.refused), "ids": shown},
        )
    return redirect(back)


@require_POST
def gold_unmark_bulk(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """The sample list's "Unmark gold": the chosen samples are gold items no more."""
    require_lead(request)
    dataset, back, chosen = _bulk_chosen(
        request, dataset_id, _("Unmark at most %(n)s gold items at once; narrow the filter.")
    )
    if chosen is None:
        return redirect(back)
    result = gold_services.gold_unmark_bulk(dataset=dataset, sample_ids=chosen)
    text = ngettext(
        "%(n)d sample is no longer a gold item.",
        "%(n)d samples are no longer gold items.",
        result.unmarked,
    ) % {"n": result.unmarked}
    if result.skipped:
        text += " " + ngettext(
            "%(n)d chosen sample was no gold item and was skipped.",
            "%(n)d chosen samples were no gold items and were skipped.",
            result.skipped,
        ) % {"n": result.skipped}
    messages.success(request, text)
    return redirect(back)


@require_GET
def gold_list(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """A dataset's gold items, each with how many reviewers served it agreed with it."""
    require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    page = Paginator(selectors.gold_items_with_accuracy(dataset=dataset), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(request, "review/gold_list.html", {"dataset": dataset, "page": page})
