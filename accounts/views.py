"""The user's own account pages: the API token; and the page a locked-out login gets."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from accounts import selectors, services
from core.roles import acting_user


@require_http_methods(["GET", "POST"])
def api_token(request: HttpRequest) -> HttpResponse:
    """Make (or remake) and revoke one's API token; a new key is shown once, right after."""
    user = acting_user(request.user)
    assert user is not None  # the login middleware lets no anonymous user through
    key = None
    if request.method == "POST":
        if request.POST.get("action") == "revoke":
            if services.api_token_revoke(user=user):
                messages.success(request, _("Your API token was revoked."))
            return redirect("accounts:api_token")
        key = services.api_token_create(user=user).key
    context = {
        "state": selectors.api_token_state(user=user, now=timezone.now()),
        "key": key,
        "days": settings.API_TOKEN_DAYS,
    }
    return render(request, "accounts/api_token.html", context)


def locked_out(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """django-axes' lockout response: the reason and how long to wait, as a 429 page."""
    minutes = max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    return render(request, "registration/locked_out.html", {"cooloff_minutes": minutes}, status=429)
