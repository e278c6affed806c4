"""The user's own account pages: the API token, the theme switch; and the page a locked-out
login gets."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from accounts import selectors, services, sign_in, themes
from accounts.models import Theme
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


@login_not_required
@require_POST
def theme_set(request: HttpRequest) -> HttpResponse:
    """Switch the theme (light, dark, or the system's) for this browser and, for a signed-in
    user, remember it for every browser they sign in from; back to the page it came from."""
    theme = request.POST.get("theme", "")
    response = redirect(sign_in.safe_next(request, request.POST.get("next", "")) or "home")
    if theme not in Theme.values:
        return response
    themes.theme_cookie_set(response, theme)
    user = acting_user(request.user)
    if user is not None:
        services.user_set_theme(user=user, theme=theme)
    return response


def locked_out(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """django-axes' lockout response: the reason and how long to wait, as a 429 page."""
    minutes = max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    return render(request, "registration/locked_out.html", {"cooloff_minutes": minutes}, status=429)
