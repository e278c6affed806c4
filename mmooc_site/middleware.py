"""Site-wide middleware: every page needs a login; no address carries a NUL character; the
Content-Security-Policy header is built once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from csp import middleware as csp_middleware
from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.utils import build_policy
from django.conf import settings
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


# What a view or template may set to change its own response's policy (django-csp's decorators
# and nonce); a response with none of them carries the settings' policy as it stands.
_OWN_POLICY = tuple(
    f"_csp_{part}{suffix}" for part in ("config", "update", "replace") for suffix in ("", "_ro")
)


class CSPMiddleware(csp_middleware.CSPMiddleware):
    """django-csp's middleware, building the settings' policy once instead of per response.

    Every response of this site carries the policy of its settings (no view changes it, no
    page asks for a nonce), and django-csp rebuilt the same two header strings for each one:
    a tenth of the review loop's middleware time. Built once per settings object (a test's
    changed settings are new objects); a response with a policy of its own, or a request whose
    nonce was used, goes through django-csp's own code.
    """

    _built: tuple[object, object, str, str] | None = None

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if getattr(request, "_csp_nonce", None) is not None or any(
            hasattr(response, name) for name in _OWN_POLICY
        ):
            return super().process_response(request, response)
        if response.status_code in (404, 500) and settings.DEBUG:
            return response  # django-csp leaves Django's debug pages alone
        config = getattr(settings, "CONTENT_SECURITY_POLICY", None)
        config_ro = getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None)
        built = self._built
        if built is None or built[0] is not config or built[1] is not config_ro:
            built = (config, config_ro, build_policy(), build_policy(report_only=True))
            self._built = built
        for header, policy, exempt, config_of in (
            (HEADER, built[2], "_csp_exempt", config),
            (HEADER_REPORT_ONLY, built[3], "_csp_exempt_ro", config_ro),
        ):
            prefixes = tuple((config_of or {}).get("EXCLUDE_URL_PREFIXES", None) or ())
            if (
                policy
                and header not in response
                and getattr(response, exempt, False) is False
                and not request.path_info.startswith(prefixes)
            ):
                response[header] = policy
        if getattr(request, "_csp_nonce", None) is None:  # as django-csp: too late for a nonce
            request.csp_nonce = csp_middleware.CheckableLazyObject(self._csp_nonce_post_response)  # type: ignore[attr-defined]
        return response
