"""The site's shell pages."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from django.views.i18n import set_language as django_set_language

from accounts import people, services
from core.roles import acting_user
from mmooc_site import health


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """A person's work (a page that says access must be granted, for someone without any)."""
    user = acting_user(request.user)
    if user is not None and not people.has_access(user):
        return redirect("accounts:no_access")
    return redirect("annotation:dataset_list")


@login_not_required
@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    """Readiness for the run command and load balancers: the database, the broker and the
    cache each answer, or 503 names what is down (the details go to the log, not the body)."""
    checks = health.check_all()
    down = [name for name, ok in checks.items() if not ok]
    body = {
        "ok": not down,
        "checks": {name: "ok" if ok else "down" for name, ok in checks.items()},
        "down": down,
    }
    return JsonResponse(body, status=503 if down else 200)


@login_not_required
@require_GET
def livez(request: HttpRequest) -> HttpResponse:
    """Liveness only: the web process answers (no database, broker or cache is asked)."""
    return JsonResponse({"ok": True})


@cache
def _schema_view() -> Any:
    from drf_spectacular.views import SpectacularAPIView

    return SpectacularAPIView.as_view()


@csrf_exempt
def api_schema(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """The API's OpenAPI schema (drf-spectacular's view, with its authentication and
    permissions). drf-spectacular, and Django's test client that it imports, load on the
    first request for the schema, not in every web process with the URL configuration."""
    response: HttpResponse = _schema_view()(request, *args, **kwargs)
    return response


@login_not_required
@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """Switch the interface language and, for a signed-in user, remember it for next time."""
    response = django_set_language(request)
    language = request.POST.get("language", "")
    user = acting_user(request.user)
    if user is not None and language in dict(settings.LANGUAGES):
        services.user_set_language(user=user, language=language)
    return response
