"""Site-wide middleware: every page needs a login; no address carries a NUL character."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.http import HttpRequest, HttpResponseBadRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.utils.translation import gettext as _


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


class RefuseNulQueryMiddleware:
    """A query string holding NUL (%00) is a 400 with a message, on pages and the API alike:
    PostgreSQL refuses NUL in any text, so a filter on it would otherwise be a 500. (Bodies
    are checked by core.parsers for the API and by Django's form fields for pages.)"""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        query = request.GET.lists()
        if any("\x00" in key or any("\x00" in v for v in values) for key, values in query):
            message = _("The address holds a NUL character (%00); remove it.")
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=400)
            return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
