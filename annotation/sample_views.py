"""The sample list as a data manager: search, filters, sorting, paging that keeps the filter,
and bulk actions on a selection or the whole filtered set, confirmed with their count."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from annotation import extensions, selectors, services
from annotation.lookups import dataset_or_404
from annotation.models import Dataset, Sample, SampleBulkJob, SampleStatus
from annotation.sample_filters import (
    DECISION_LABELS,
    ORDERING_LABELS,
    VERDICT_LABELS,
    BulkAction,
    SampleFilter,
)
from annotation.saved_views.page import page_layout
from annotation.services.bulk import BulkResult, send_from_statuses
from core.jobs import ACTIVE
from core.keyset import BadCursor, Cursor, KeysetPage, keyset_page
from core.pagination import CountWithinBudget
from core.roles import acting_user, is_lead, sees_judge_votes

PAGE_SIZE = 50
# The page counts its matches exactly when the database does so within this time, otherwise it
# shows the planner's estimate, labelled as such (bench/bench_data_manager.py: every filter and
# pair of filters under 150 ms on 41,883 samples).
COUNT_BUDGET_MS = 60
# Where the planner expects this many matches or more, its estimate is the count, without
# trying to count them (a million samples: the budget would be spent in vain on each request).
EXACT_COUNT_BELOW = 100_000


def _list_url(dataset: Dataset, filter: SampleFilter) -> str:
    query = urlencode(filter.to_params())
    url = reverse("annotation:sample_list", args=[dataset.pk])
    return f"{url}?{query}" if query else url


@require_GET
def sample_list(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = dataset_or_404(request, dataset_id)
    filter = SampleFilter.from_params(request.GET)
    # Judge-derived parameters and gold items are for leads, other reviewers' work is hidden in
    # blind review: left out of a reader's filter (their inputs are not shown to them).
    filter = filter.without(filter.refused_for(user=request.user, dataset=dataset))
    lead = is_lead(request.user)
    layout = page_layout(request, dataset)
    samples = selectors.sample_list_page(
        dataset=dataset,
        filter=filter,
        with_gold=lead and "gold" in layout.columns,
    )
    page = _page(request, samples, filter.order_by(), layout.page_size)
    query = urlencode(filter.to_params())
    return render(
        request,
        "annotation/sample_list.html",
        {
            "dataset": dataset,
            "page": page,
            "filter": filter,
            "filter_params": filter.to_params(),
            "query": "&".join(q for q in (query, layout.query) if q),
            **layout.context,
            "choices": selectors.sample_filter_choices(dataset=dataset),
            "statuses": SampleStatus.choices,
            "orderings": [
                (key, label, direction)
                for key, label in ORDERING_LABELS.items()
                for direction in ("", "-")
            ],
            "actions": BulkAction.choices,
            "extra_buttons": [
                (button.label, reverse(button.url_name, args=[dataset.pk]))
                for button in extensions.sample_list_buttons()
            ],
            "is_lead": lead,
            "judge_hints": sees_judge_votes(request.user),
            "review_filters": lead
            or extensions.others_work_visible_in(user=request.user, dataset=dataset),
            "decisions": list(DECISION_LABELS.items()),
            "verdict_labels": VERDICT_LABELS,
        },
    )


def _page(
    request: HttpRequest, samples: QuerySet[Sample], order: tuple[str, ...], size: int
) -> Page[Sample] | KeysetPage[Sample]:
    """The page the request asks for: by the cursor its links carry (a keyset page, whose cost
    does not grow with its depth), the last page (the order reversed), the first, or a page
    by its number (the links of old, kept for bookmarks). Its count is exact where the database
    counts it cheaply, else estimated and labelled. A cursor that cannot be used (altered, cut,
    of another sort) gives the first page with a message saying so."""
    counter = CountWithinBudget(
        samples, size, budget_ms=COUNT_BUDGET_MS, exact_below=EXACT_COUNT_BELOW
    )
    token, number = request.GET.get("cursor"), request.GET.get("page", "")
    if not token and number not in ("", "1", "last"):
        return counter.get_page(number)
    cursor = Cursor(order, None, before=True) if number == "last" and not token else None
    if token:
        try:
            cursor = Cursor.decode(token, order=order, model=Sample)
        except BadCursor as exc:
            messages.warning(request, _("%(problem)s Here is the first page.") % {"problem": exc})
    page = keyset_page(samples, order=order, cursor=cursor, per_page=size)
    counter.count  # noqa: B018 - counted now: whether it is an estimate is known before the page shows
    # A page that holds every match makes an estimate exact: no "About" on a short list.
    counter.correct_by(page)
    page.paginator = counter
    return page


def _ids(request: HttpRequest) -> list[int] | None:
    """The chosen sample ids, or None for "every sample the filter matches"."""
    if request.POST.get("scope") == "all":
        return None
    ids = []
    for raw in request.POST.getlist("ids"):
        try:
            ids.append(int(raw))
        except ValueError:
            continue
    return ids


def _priority(request: HttpRequest) -> int | None:
    raw = request.POST.get("priority", "").strip()
    try:
        return int(raw) if raw else None
    except ValueError:
        return None


@require_POST
def sample_bulk(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Ask for confirmation with the count, then run the bulk action (leads only)."""
    if not is_lead(request.user):
        raise PermissionDenied(_("Only project leads may change samples in bulk."))
    dataset = dataset_or_404(request, dataset_id)
    filter = SampleFilter.from_params(request.POST)
    back = _list_url(dataset, filter)
    action = request.POST.get("action", "")
    ids = _ids(request)
    if action not in BulkAction.values:
        messages.error(request, _("Choose what to do with the samples."))
        return redirect(back)
    if ids == []:
        messages.error(request, _("Tick some samples first, or choose every matching sample."))
        return redirect(back)
    samples = selectors.samples_selected(dataset=dataset, filter=filter, ids=ids)
    priority, reason = _priority(request), request.POST.get("reason", "").strip()
    assignees = [name for name in request.POST.getlist("assignees") if name.strip()]
    assigning = action in (BulkAction.ASSIGN, BulkAction.UNASSIGN)
    if request.POST.get("confirm") != "1":
        return render(
            request,
            "annotation/sample_bulk_confirm.html",
            {
                "dataset": dataset,
                "action": BulkAction(action),
                "selected": samples.count(),
                "affected": selectors.samples_bulk_affected(
                    action=action, samples=samples, from_statuses=send_from_statuses(filter)
                ),
                "filter_params": filter.to_params(),
                "ids": ids or [],
                "scope": "all" if ids is None else "selected",
                "priority": "" if priority is None else priority,
                "reason": reason,
                "needs_reason": action == BulkAction.TAKE_DOWN,
                "annotators": (
                    selectors.dataset_annotator_usernames(dataset=dataset) if assigning else []
                ),
                "assignees": assignees,
                "back": back,
            },
        )
    try:
        result = services.samples_bulk_start(
            dataset=dataset,
            action=action,
            filter=filter,
            ids=ids,
            by=acting_user(request.user),
            priority=priority,
            reason=reason,
            assignees=assignees,
        )
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
        return redirect(back)
    if isinstance(result, SampleBulkJob):  # a worker runs it; its page follows
        return redirect("annotation:sample_bulk_job", job_id=result.pk)
    messages.success(request, bulk_summary(action, result))
    return redirect(back)


@never_cache
@require_GET
def sample_bulk_job(request: HttpRequest, job_id: int) -> HttpResponse:
    """A bulk action running in the background: its progress, then what it did."""
    if not is_lead(request.user):
        raise PermissionDenied(_("Only project leads may change samples in bulk."))
    job = selectors.sample_bulk_job_get(user=request.user, job_id=job_id)
    if job is None:
        raise Http404(_("No such bulk action."))
    result = BulkResult(changed=job.changed, skipped=job.skipped, slots_opened=job.slots_opened)
    query = job.params.get("filter") or ""
    back = reverse("annotation:sample_list", args=[job.dataset_id])
    return render(
        request,
        "annotation/sample_bulk_job.html",
        {
            "job": job,
            "dataset": job.dataset,
            "action": BulkAction(job.action).label
            if job.action in BulkAction.values
            else job.action,
            "summary": bulk_summary(job.action, result) if job.status == "succeeded" else "",
            "running": job.status in ACTIVE,
            "back": f"{back}?{query}" if query else back,
        },
    )


def bulk_summary(action: str, result: BulkResult) -> str:
    """What a bulk action did, in a sentence for the page."""
    n = result.changed
    if action == BulkAction.SEND_TO_REVIEW:
        text = (
            ngettext("%(n)d sample sent to review", "%(n)d samples sent to review", n) % {"n": n}
            + "; "
            + ngettext(
                "%(slots)d review slot opened.",
                "%(slots)d review slots opened.",
                result.slots_opened,
            )
            % {"slots": result.slots_opened}
        )
    elif action == BulkAction.SET_PRIORITY:
        text = ngettext("Priority set on %(n)d sample.", "Priority set on %(n)d samples.", n) % {
            "n": n
        }
    elif action == BulkAction.TAKE_DOWN:
        text = ngettext("%(n)d sample taken down.", "%(n)d samples taken down.", n) % {"n": n}
    elif action == BulkAction.ASSIGN:
        text = ngettext(
            "%(n)d assignment made: those annotators are served these samples first.",
            "%(n)d assignments made: those annotators are served these samples first.",
            n,
        ) % {"n": n}
    elif action == BulkAction.UNASSIGN:
        text = ngettext("%(n)d assignment removed.", "%(n)d assignments removed.", n) % {"n": n}
    else:
        text = ngettext("%(n)d sample restored.", "%(n)d samples restored.", n) % {"n": n}
    if result.skipped:
        text += " " + ngettext(
            "%(n)d selected sample was left as it was.",
            "%(n)d selected samples were left as they were.",
            result.skipped,
        ) % {"n": result.skipped}
    return text


@require_GET
def duplicate_list(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """A dataset's possible duplicates, each with a link to the pair side by side."""
    dataset = dataset_or_404(request, dataset_id)
    page = Paginator(selectors.duplicate_pairs_of_dataset(dataset=dataset), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(request, "annotation/duplicate_list.html", {"dataset": dataset, "page": page})


@require_GET
def duplicate_pair(request: HttpRequest, dataset_id: int, pair_id: int) -> HttpResponse:
    """Two samples that look like the same item, side by side."""
    dataset = dataset_or_404(request, dataset_id)
    pair = selectors.duplicate_pair_get(dataset=dataset, pair_id=pair_id)
    if pair is None:
        raise Http404(_("No such pair of samples."))
    sides = [(pair.original, "first-seen"), (pair.sample, "duplicate")]
    return render(
        request,
        "annotation/duplicate_pair.html",
        {"dataset": dataset, "pair": pair, "pair_sides": sides},
    )
