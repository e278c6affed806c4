"""The theme a browser shows: kept in a cookie that every page reads (no query, no script),
and, for a signed-in person, in their preference, from which signing in restores it."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase

from accounts.models import Theme

THEME_COOKIE_NAME = "studio_theme"


def theme_of(request: HttpRequest) -> str:
    """The theme the browser's cookie asks for: 'light', 'dark', or '' to follow the system."""
    theme = request.COOKIES.get(THEME_COOKIE_NAME, "")
    return theme if theme in Theme.values else ""


def theme_cookie_set(response: HttpResponseBase, theme: str) -> None:
    """Keep ``theme`` for this browser; following the system needs no cookie."""
    if theme:
        response.set_cookie(
            THEME_COOKIE_NAME,
            theme,
            max_age=365 * 24 * 3600,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,
        )
    else:
        response.delete_cookie(THEME_COOKIE_NAME, samesite="Lax")
