"""The lead's page of quality in consensus: reviewers the thresholds flag, excluding them from
consensus (and taking it back), and the Dawid–Skene estimate with the uncertain samples sent
to adjudication in bulk. The estimate is computed in the request, bounded to the latest
``MAX_ESTIMATE_SAMPLES`` samples so that it stays within about a second."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotation.lookups import dataset_or_404
from core.roles import request_user, require_lead
from review.exclusions import selectors as consensus_selectors
from review.exclusions import services as exclusions
from review.selectors import review_settings_get

MAX_UNCERTAIN_SHOWN = 100


def _threshold(raw: str | None) -> float:
    """The posterior threshold of a form, or a ValidationError saying what is allowed."""
    if raw is None or raw == "":
        return consensus_selectors.DEFAULT_POSTERIOR_THRESHOLD
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.34 <= value <= 1:  # below 1/3 no sample of three classes can be uncertain
        raise ValidationError(
            _("The posterior threshold is a number between 0.34 and 1."), code="bad_threshold"
        )
    return value


@require_GET
def consensus_quality(request: HttpRequest, dataset_id: int) -> HttpResponse:
    require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    try:
        threshold = _threshold(request.GET.get("threshold"))
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
        threshold = consensus_selectors.DEFAULT_POSTERIOR_THRESHOLD
    estimate = consensus_selectors.consensus_estimate(dataset=dataset, threshold=threshold)
    return render(
        request,
        "review/consensus_quality.html",
        {
            "dataset": dataset,
            "settings": review_settings_get(dataset=dataset),
            "reviewers": consensus_selectors.reviewer_trust(dataset=dataset),
            "estimate": estimate,
            "uncertain": estimate.uncertain[:MAX_UNCERTAIN_SHOWN] if estimate else [],
            "threshold": threshold,
            "max_samples": consensus_selectors.MAX_ESTIMATE_SAMPLES,
        },
    )


def _page(dataset_id: int, threshold: float | None = None) -> HttpResponse:
    url = reverse("review:consensus_quality", args=[dataset_id])
    return redirect(f"{url}?threshold={threshold}" if threshold is not None else url)


def _reviewer(user_id: int) -> User:
    reviewer = User.objects.filter(pk=user_id).first()
    if reviewer is None:
        raise Http404(_("No such reviewer."))
    return reviewer


@require_POST
def reviewer_exclude(request: HttpRequest, dataset_id: int, user_id: int) -> HttpResponse:
    return _change_exclusion(request, dataset_id, user_id, exclude=True)


@require_POST
def reviewer_include(request: HttpRequest, dataset_id: int, user_id: int) -> HttpResponse:
    return _change_exclusion(request, dataset_id, user_id, exclude=False)


def _change_exclusion(
    request: HttpRequest, dataset_id: int, user_id: int, *, exclude: bool
) -> HttpResponse:
    """Exclude a reviewer from consensus (with the posted reason) or count them again, and
    say what happened to the samples they reviewed."""
    require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    reviewer = _reviewer(user_id)
    by = request_user(request)
    try:
        if exclude:
            result = exclusions.reviewer_exclude(
                dataset=dataset, reviewer=reviewer, by=by, reason=request.POST.get("reason", "")
            )
            done = _(
                "%(name)s is excluded from consensus: %(resettled)d samples settled again, "
                "%(returned)d back to review."
            )
        else:
            result = exclusions.reviewer_include(dataset=dataset, reviewer=reviewer, by=by)
            done = _(
                "%(name)s counts in consensus again: %(resettled)d samples settled again, "
                "%(returned)d back to review."
            )
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
    else:
        counts = {"resettled": result.resettled, "returned": result.returned}
        messages.success(request, done % {"name": reviewer.get_username(), **counts})
    return _page(dataset.pk)


@require_POST
def uncertain_to_adjudication(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Send every sample whose estimated label is uncertain at the posted threshold (the
    estimate is computed again, so the page's list and this action agree)."""
    require_lead(request)
    dataset = dataset_or_404(request, dataset_id)
    try:
        threshold = _threshold(request.POST.get("threshold"))
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
        return _page(dataset.pk)
    estimate = consensus_selectors.consensus_estimate(dataset=dataset, threshold=threshold)
    sent = exclusions.samples_send_to_adjudication(
        dataset=dataset,
        sample_ids=[u.sample_id for u in estimate.uncertain] if estimate else [],
        by=request_user(request),
        reason=_("Uncertain consensus (posterior below %(threshold)s).") % {"threshold": threshold},
    )
    messages.success(request, _("%(n)d samples sent to adjudication.") % {"n": sent})
    return _page(dataset.pk, threshold)
