"""The site's shell pages."""

from __future__ import annotations

import io
import sys
import zipfile
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import InterfaceError, OperationalError
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.html import escape
from django.utils.translation import gettext as _
from django.views import defaults
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


@require_GET
def formats(request: HttpRequest) -> HttpResponse:
    """The reference of every format the site reads and writes, with their fields."""
    from judging.formats import reference as formats_reference

    return render(
        request,
        "formats.html",
        {"sections": formats_reference.SECTIONS, "examples": formats_reference.example_paths()},
    )


@require_GET
def format_example(request: HttpRequest, name: str) -> HttpResponse | FileResponse:
    """An example file of the reference (a folder is sent as a zip)."""
    from judging.formats import reference as formats_reference

    path = formats_reference.example_paths().get(name)
    if path is None or not path.exists():
        raise Http404
    if path.is_file():
        return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for item in sorted(path.rglob("*")):
            if item.is_file():
                archive.write(
                    item, str(PurePosixPath(path.name) / item.relative_to(path).as_posix())
                )
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{path.name}.zip"'
    return response


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


DATABASE_RETRY_AFTER_SECONDS = 10


def server_error(request: HttpRequest) -> HttpResponse:
    """The site's handler500: a request that failed because the database could not be reached
    (a restart, a network cut: Django's OperationalError or InterfaceError, raised by a view,
    DRF or a middleware) is a 503 with Retry-After, JSON under /api/, a plain page elsewhere,
    built without the database; anything else is Django's own 500."""
    error = sys.exc_info()[1]
    if not isinstance(error, OperationalError | InterfaceError):
        return defaults.server_error(request)
    message = _("The database cannot be reached right now. Try again in a few seconds.")
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message}, status=503)
    else:
        title = _("Temporarily unavailable")
        response = HttpResponse(
            f"<!doctype html><title>{escape(title)}</title><h1>{escape(title)}</h1>"
            f"<p>{escape(message)}</p>",
            status=503,
        )
    response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
    return response


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
