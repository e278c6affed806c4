"""The workbench's next sample, reserved and rendered while the reviewer works on the current
one (``review.queue.ahead``): reserve (or renew) it, take it as the lease once the current
review is in, give it back when unused (``navigator.sendBeacon`` on leaving the page).

Each answers JSON; a bad or foreign token gets 400 with the reason. They take form fields
(``token``), which a beacon can send with the CSRF token among them.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation import selectors as annotation_selectors
from annotation.lookups import dataset_or_404
from core.roles import ANNOTATOR, is_reviewer, request_user
from review import selectors
from review.queue import ahead as ahead_services
from review.workbench.views import workbench_context


def _reviewer(request: HttpRequest) -> None:
    if not is_reviewer(request.user):
        raise PermissionDenied(_("Only annotators may claim or submit review work."))


def _reservation(request: HttpRequest) -> ahead_services.Reservation:
    return ahead_services.reservation_read(
        token=request.POST.get("token", ""), reviewer=request_user(request)
    )


def _bad(exc: ValidationError) -> JsonResponse:
    return JsonResponse({"detail": " ".join(exc.messages)}, status=400)


@never_cache
@require_POST
def ahead_reserve(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Reserve the reviewer's next sample and answer its workbench page (``html``) with the
    reservation's ``token``; with the ``token`` of a reservation still theirs, renew it
    (``renewed``, no page). 204 when nothing is left."""
    _reviewer(request)
    user = request_user(request)
    dataset = annotation_selectors.dataset_get_visible(
        user=user, dataset_id=dataset_id, role=ANNOTATOR
    )
    if dataset is None:
        dataset_or_404(request, dataset_id)  # 404 when not visible at all
        raise PermissionDenied(_("Only annotators may claim or submit review work."))
    previous = None
    if request.POST.get("token"):
        try:
            previous = _reservation(request)
        except ValidationError as exc:
            return _bad(exc)
    reservation = ahead_services.slot_reserve_ahead(
        dataset=dataset, reviewer=user, previous=previous
    )
    if reservation is None:
        return HttpResponse(status=204)
    body: dict[str, object] = {
        "token": reservation.token,
        "sample": reservation.sample_id,
        "url": reverse("review:workbench", args=[reservation.sample_id]),
        "expires_at": reservation.until.isoformat(),
    }
    if previous is not None and previous.slot_id == reservation.slot_id:
        return JsonResponse(body | {"renewed": True})
    bench = selectors.workbench_get(user=user, sample_id=reservation.sample_id)
    if bench is None:  # pragma: no cover - a reserved sample is one of the dataset's
        return HttpResponse(status=204)
    context = workbench_context(request, bench, ahead=True)
    html = render_to_string("review/workbench.html", context, request=request)
    return JsonResponse(body | {"renewed": False, "html": html})


@require_POST
def ahead_take(request: HttpRequest) -> HttpResponse:
    """Make the reservation the reviewer's lease; 409 when it is gone (the page then claims
    as usual)."""
    _reviewer(request)
    try:
        reservation = _reservation(request)
    except ValidationError as exc:
        return _bad(exc)
    expires = ahead_services.slot_take_reserved(
        reservation=reservation, reviewer=request_user(request)
    )
    if expires is None:
        return JsonResponse(
            {"detail": _("This sample was not kept for you; the next one is claimed instead.")},
            status=409,
        )
    when = formats.time_format(timezone.localtime(expires), "H:i")
    note = _("Your lease runs until %(when)s; your work is kept as a draft even after it.")
    return JsonResponse({"sample": reservation.sample_id, "lease_note": note % {"when": when}})


@require_POST
def ahead_release(request: HttpRequest) -> HttpResponse:
    """Give an unused reservation back to the queue (204 whether or not it was still there)."""
    _reviewer(request)
    try:
        reservation = _reservation(request)
    except ValidationError as exc:
        return _bad(exc)
    ahead_services.slot_release_reserved(reservation=reservation)
    return HttpResponse(status=204)
