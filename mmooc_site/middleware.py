"""Site-wide middleware: every page needs a login."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.http import HttpRequest
from django.http.response import HttpResponseBase


class LoginRequiredMiddleware(DjangoLoginRequired):
    """Django's login requirement for pages; the API answers 401/403 itself.

    API views authenticate by token or session inside DRF, after middleware has run, so they
    are left to DRF's IsAuthenticated default rather than redirected to the login page.
    """

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponseBase | None:
        if request.path.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
