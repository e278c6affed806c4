"""What accounts writes to the access log on others' events: membership changes (announced
by annotation), failed sign-ins (Django's signal) and lockouts (django-axes' signal)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model

from accounts import access_log
from accounts.models import AccessEventKind

if TYPE_CHECKING:
    from annotation.extensions import MembershipChange


def membership_changed(change: MembershipChange) -> None:
    if change.before is None:
        kind = AccessEventKind.MEMBER_ADDED
    elif change.after is None:
        kind = AccessEventKind.MEMBER_REMOVED
    else:
        kind = AccessEventKind.MEMBER_ROLE_CHANGED
    access_log.access_event_record(
        kind=kind,
        actor=change.actor,
        subject=change.user,
        dataset=change.dataset,
        detail={
            "before": sorted(change.before) if change.before is not None else None,
            "after": sorted(change.after) if change.after is not None else None,
        },
    )


def _user(username: str) -> Any:
    return get_user_model().objects.filter(username=username).first() if username else None


def sign_in_failed(
    sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any
) -> None:
    username = str(credentials.get("username") or "")
    if "second_factor_token" in credentials:
        step = "second factor"
    elif "old_password" in credentials or (
        request is not None and "old_password" in getattr(request, "POST", {})
    ):
        step = "password change"
    else:
        step = "password"
    detail: dict[str, Any] = {"step": step}
    if request is not None and getattr(request, "axes_locked_out", False):
        detail["locked_out"] = True
    access_log.access_event_record(
        kind=AccessEventKind.SIGN_IN_FAILED,
        subject=_user(username),
        subject_name=username[:150],
        detail=detail,
        request=request,
    )


def locked_out(sender: Any, request: Any = None, username: str = "", **kwargs: Any) -> None:
    access_log.access_event_record(
        kind=AccessEventKind.LOCKED_OUT,
        subject=_user(username or ""),
        subject_name=(username or "")[:150],
        detail={"ip_address": kwargs.get("ip_address") or ""},
        request=request,
    )
