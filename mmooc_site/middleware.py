"""Site-wide middleware: every page needs a login; no address carries a NUL character."""

from __future__ import annotations

from collections.abc import Callable, Iterable
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


class RefuseNulMiddleware:
    """A request holding NUL (\\u0000) where it would be stored or looked up is a 400 with a
    message: in the query string (%00) on pages and the API alike, and in a page's form
    fields, field names or upload file names. PostgreSQL refuses NUL in any text, so a filter
    on it would be a 500, and a form would otherwise answer 200 with a field error. The
    answer is text for a browser (its Accept names text/html) and JSON ``{"detail": …}`` for
    the API and for scripts (the pages' own fetch calls among them).

    API bodies are checked by DRF's parsers (core.parsers), after authentication, and so are
    left to them here.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        api = request.path.startswith("/api/")
        message = None
        if _holds_nul(request.GET.lists()):
            message = _("The address holds a NUL character (%00); remove it.")
        elif (
            not api
            and request.method not in ("GET", "HEAD", "OPTIONS")
            and _form_holds_nul(request)
        ):
            message = _(
                "The form holds a NUL character (\\u0000), which cannot be stored; remove it."
            )
        if message is None:
            return self.get_response(request)
        # Browsers ask for HTML by name; a script's fetch (Accept: */* or JSON) reads JSON.
        if api or "text/html" not in request.headers.get("Accept", ""):
            return JsonResponse({"detail": message}, status=400)
        return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")


def _holds_nul(lists: Iterable[tuple[str, list[Any]]]) -> bool:
    return any(
        "\x00" in key or any(isinstance(v, str) and "\x00" in v for v in values)
        for key, values in lists
    )


def _form_holds_nul(request: HttpRequest) -> bool:
    """Whether a form body (URL-encoded or multipart) holds NUL in a field, a field's name or
    an upload's file name; file contents are left alone."""
    content_type = request.content_type or ""
    if content_type not in ("application/x-www-form-urlencoded", "multipart/form-data"):
        return False
    # A body Django cannot parse raises here as it would in the view (a 400).
    fields, files = request.POST, request.FILES
    if _holds_nul(fields.lists()):
        return True
    return any(
        "\x00" in name or any("\x00" in str(upload.name or "") for upload in uploads)
        for name, uploads in files.lists()
    )
