"""The access log: writing a line (the only write there is) and reading it back for leads.

Every invitation, acceptance, role or membership change, change of activation, sign-in and
failed sign-in or lockout is a line; nothing in the application updates or deletes one.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from axes.helpers import get_client_ip_address
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy

from accounts.models import AccessEvent, AccessEventKind

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.http import HttpRequest

    from annotation.models import Dataset


def _name(user: Any) -> str:
    return str(user.get_username()) if user is not None else ""


def access_event_record(
    *,
    kind: AccessEventKind,
    actor: User | None = None,
    subject: User | None = None,
    subject_name: str = "",
    dataset: Dataset | None = None,
    detail: dict[str, Any] | None = None,
    request: HttpRequest | None = None,
) -> AccessEvent:
    """Append one line to the access log (``subject_name`` defaults to the subject's
    username: give it for someone without an account, an invited address or an unknown
    username tried at the login)."""
    address = get_client_ip_address(request) if request is not None else None
    return AccessEvent.objects.create(
        at=timezone.now(),
        kind=kind,
        actor=actor,
        actor_name=_name(actor),
        subject=subject,
        subject_name=(subject_name or _name(subject))[:254],
        dataset=dataset,
        dataset_name=dataset.name if dataset is not None else "",
        detail=detail or {},
        ip_address=address or None,
    )


@dataclass(frozen=True)
class AccessFilter:
    """What the access log page shows: a kind, a person (a username or address, in part,
    as the one acted on or the one who acted), and a period."""

    kind: str = ""
    person: str = ""
    since: dt.date | None = None
    until: dt.date | None = None


def access_events(*, filter: AccessFilter) -> QuerySet[AccessEvent]:
    """The log's lines matching the filter, newest first (one query per page)."""
    events = AccessEvent.objects.all()
    if filter.kind:
        events = events.filter(kind=filter.kind)
    if filter.person:
        events = events.filter(
            Q(subject_name__icontains=filter.person) | Q(actor_name__icontains=filter.person)
        )
    zone = timezone.get_current_timezone()
    if filter.since is not None:
        start = dt.datetime.combine(filter.since, dt.time.min, tzinfo=zone)
        events = events.filter(at__gte=start)
    if filter.until is not None:
        end = dt.datetime.combine(filter.until + dt.timedelta(days=1), dt.time.min, tzinfo=zone)
        events = events.filter(at__lt=end)
    return events.order_by("-at", "-id")


_KEYS = {
    "before": gettext_lazy("before"),
    "after": gettext_lazy("after"),
    "source": gettext_lazy("through"),
    "role": gettext_lazy("role"),
    "datasets": gettext_lazy("datasets"),
    "email": gettext_lazy("address"),
    "state": gettext_lazy("state"),
    "method": gettext_lazy("how"),
    "groups": gettext_lazy("groups"),
    "roles": gettext_lazy("roles"),
    "reason": gettext_lazy("reason"),
    "error": gettext_lazy("error"),
    "provider_error": gettext_lazy("provider's answer"),
    "exception": gettext_lazy("problem"),
    "step": gettext_lazy("step"),
    "locked_out": gettext_lazy("locked out"),
    "left": gettext_lazy("recovery codes left"),
    "ip_address": gettext_lazy("address"),
}
_VALUES = {
    "lead": gettext_lazy("lead"),
    "annotator": gettext_lazy("annotator"),
    "auditor": gettext_lazy("auditor"),
    "both": gettext_lazy("annotator and auditor"),
    "password": gettext_lazy("password"),
    "second factor": gettext_lazy("second factor"),
    "recovery code": gettext_lazy("recovery code"),
    "invitation": gettext_lazy("invitation"),
    "single sign-on": gettext_lazy("single sign-on"),
    "password change": gettext_lazy("password change"),
    "expired": gettext_lazy("expired"),
    "revoked": gettext_lazy("revoked"),
    "accepted": gettext_lazy("accepted"),
    "deactivated": gettext_lazy("deactivated"),
}


def _value(value: Any) -> str:
    if value is None:
        return "—"
    if value is True:
        return str(gettext_lazy("yes"))
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value) if value else "—"
    text = str(value)
    return str(_VALUES.get(text, text))


def describe(event: AccessEvent) -> str:
    """The line's detail in the reader's language ("before: annotator; after: auditor")."""
    order = list(_KEYS)
    items = sorted(
        (event.detail or {}).items(),
        key=lambda item: order.index(item[0]) if item[0] in order else len(order),
    )
    parts = [
        f"{_KEYS.get(key, key)}: {_value(value)}"
        for key, value in items
        if value not in ("", None) or key in ("before", "after")
    ]
    return "; ".join(parts)
