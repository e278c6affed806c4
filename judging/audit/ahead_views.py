"""The auditor's next item, reserved and rendered while they rate the current one
(``judging.audit.ahead``): reserve (or renew) it, take it as the lease once the current rating
is in, give it back when unused (``navigator.sendBeacon`` on leaving the page).

Auditors and leads of the audit's dataset only (others get 403, an audit set they may not see
404). Each answers JSON; a bad or foreign token gets 400 with the reason. They take form fields
(``token``), which a beacon can send with the CSRF token among them.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from core.roles import request_user
from judging.audit import ahead, selectors
from judging.audit.views import audit_set_for, rating_context, require_auditor


def _reservation(request: HttpRequest) -> ahead.Reservation:
    return ahead.reservation_read(
        token=request.POST.get("token", ""), auditor=request_user(request)
    )


def _bad(exc: ValidationError) -> JsonResponse:
    return JsonResponse({"detail": " ".join(exc.messages)}, status=400)


@never_cache
@require_POST
def audit_ahead(request: HttpRequest, audit_set_id: int) -> HttpResponse:
    """Reserve the auditor's next item and answer its rating page (``html``) with the
    reservation's ``token``; with the ``token`` of a reservation still theirs, renew it
    (``renewed``, no page). 204 when nothing is left."""
    audit_set = audit_set_for(request, audit_set_id)
    user = request_user(request)
    previous = None
    if request.POST.get("token"):
        try:
            previous = _reservation(request)
        except ValidationError as exc:
            return _bad(exc)
    reservation = ahead.audit_reserve_ahead(audit_set=audit_set, auditor=user, previous=previous)
    if reservation is None:
        return HttpResponse(status=204)
    body: dict[str, object] = {
        "token": reservation.token,
        "item": reservation.item_id,
        "url": reverse("judging:audit_rate", args=[reservation.item_id]),
        "expires_at": reservation.until.isoformat(),
    }
    if previous is not None and previous.lease_id == reservation.lease_id:
        return JsonResponse(body | {"renewed": True})
    view = selectors.audit_item_for_rating(user=user, item_id=reservation.item_id)
    if view is None:  # pragma: no cover - a reserved item is one of the visible set's
        return HttpResponse(status=204)
    html = render_to_string(
        "judging/audit_rate.html", rating_context(view, ahead=True), request=request
    )
    return JsonResponse(body | {"renewed": False, "html": html})


@require_POST
def audit_ahead_take(request: HttpRequest) -> HttpResponse:
    """Make the reservation the auditor's lease; 409 when it is gone (the page then claims as
    usual)."""
    require_auditor(request)
    try:
        reservation = _reservation(request)
    except ValidationError as exc:
        return _bad(exc)
    user = request_user(request)
    audit_set = selectors.audit_set_get_visible(user=user, audit_set_id=reservation.audit_set_id)
    if audit_set is None:
        raise Http404(_("No such audit set."))
    expires = ahead.audit_take_reserved(
        reservation=reservation, auditor=user, lease_seconds=audit_set.lease_seconds
    )
    if expires is None:
        return JsonResponse(
            {"detail": _("This item was not kept for you; the next one is claimed instead.")},
            status=409,
        )
    when = formats.time_format(timezone.localtime(expires), "H:i")
    note = _("Your lease on this item runs until %(when)s.")
    return JsonResponse({"item": reservation.item_id, "lease_note": note % {"when": when}})


@require_POST
def audit_ahead_release(request: HttpRequest) -> HttpResponse:
    """Give an unused reservation back to the queue (204 whether or not it was still there)."""
    require_auditor(request)
    try:
        reservation = _reservation(request)
    except ValidationError as exc:
        return _bad(exc)
    ahead.audit_release_reserved(reservation=reservation)
    return HttpResponse(status=204)
