"""The least a Django site could do per review loop: the bench's "floor site".

Served with the settings of ``bench/floor_site.py`` (the site's own, same middleware, database
connection and gunicorn workers) by ``bench_review.py`` only, never deployed. Two views:

- ``POST /floor/claim/`` runs the bare claim statement on the request's database connection
  for the reviewer named in the ``X-Reviewer`` header (no authentication, no ORM, no sample
  read) and answers its slot as JSON;
- ``POST /floor/submit/`` does nothing and answers 201.

A claim + submit loop against it costs the web stack's two requests plus the bare claim, and
nothing of the product's own work, so its rate bounds from above what any Django
implementation of the two API calls could reach on the same machine.

Two more, under ``/floor/statements/``, are the "statements floor" of
``bench/statements_floor.py``: the real loop's statements with the least Python around them.
"""

from __future__ import annotations

import json
import os

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from bench.statements_floor import statements_claim, statements_submit
from mmooc_site.views import livez


@csrf_exempt
def floor_claim(request: HttpRequest, dataset_id: int) -> HttpResponse:
    # The statement comes from bench_review (BENCH_CLAIM_SQL), so both phases run the same one.
    with connection.cursor() as cursor:
        cursor.execute(
            os.environ["BENCH_CLAIM_SQL"],
            {
                "me": int(request.headers["X-Reviewer"]),
                "dataset": dataset_id,
                "now": timezone.now(),
                "skipped": False,
                "sample": None,
            },
        )
        row = cursor.fetchone()
    if row is None:
        return HttpResponse(status=204)
    return JsonResponse({"lease": {"slot": row[0]}, "sample": {"id": row[1]}})


@csrf_exempt
def floor_submit(request: HttpRequest) -> HttpResponse:
    json.loads(request.body or b"{}")
    return HttpResponse(b"{}", status=201, content_type="application/json")


urlpatterns = [
    path("healthz/", livez),  # liveness only: the web stack, no database
    path("floor/claim/<int:dataset_id>/", floor_claim),
    path("floor/submit/", floor_submit),
    # The statements floor: the real loop's statements with the least Python around them.
    path("floor/statements/claim/<int:dataset_id>/", statements_claim),
    path("floor/statements/submit/", statements_submit),
]
