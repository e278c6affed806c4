"""What every page's top bar needs to know of the signed-in person, and the theme to draw."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from accounts.models import Theme
from accounts.themes import theme_of
from core.roles import is_lead, is_reviewer


def people(request: HttpRequest) -> dict[str, Any]:
    """``user_is_lead``: whether to show the People link; ``user_is_reviewer``: whether to
    show "My reviews" (read only when a page asks)."""
    return {
        "user_is_lead": SimpleLazyObject(lambda: is_lead(request.user)),
        "user_is_reviewer": SimpleLazyObject(lambda: is_reviewer(request.user)),
    }


def theme(request: HttpRequest) -> dict[str, Any]:
    """``theme``: the ``data-theme`` of ``<html>`` ('' follows the system); ``themes``: the
    choices of the top bar's theme menu."""
    return {"theme": theme_of(request), "themes": Theme.choices}
