"""The site's shell pages."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return redirect("annotation:dataset_list")


@login_not_required
@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for the run command and load balancers; shows no data."""
    return JsonResponse({"ok": True})
