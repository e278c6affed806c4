"""The floor site's "statements floor": the review loop's database and Redis work, nothing else.

Two views, served by the floor site (``bench/floor_urls.py``) for ``bench_review.py``'s
``statements`` phase only, never deployed. They send the very statements the real claim and
submit send (``bench/profile_review.py --sql`` lists those), in the same order and
transactions, the product's own statement texts (``core.authentication.TOKEN_USER``,
``review.queue.statements.CLAIM``, ``review.services.submit_sql``'s ``LOCK``, ``WRITE`` and
``SETTLE``) through Django's own cursor, with the least Python around them: no DRF, no
serializers, no ORM, no model instances, a fixed answer.

- ``POST /floor/statements/claim/<dataset>/``: the token, its user and roles; the throttle
  (``core.throttling.count_call``: the user's count in one round trip, as the
  site's throttle counts it); the claim with the dataset's visibility test and the
  sample's card;
- ``POST /floor/statements/submit/``: the token and the throttle again; then in one
  transaction the slot lock with the sample and its dataset when visible, the review write
  with a first review's status step or, when the review settles the sample, the round's
  counted reviews, and the settlement.

The reviewer is the token's user and the sample the one the client sends, so the queue's
rules hold as on the site (the lock serialises a sample's submissions; only the reviewer's
own leased slot is filled). ``BENCH_STATEMENTS_DROP=throttle`` leaves out the throttle.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
import uuid
from functools import cache
from typing import Any

from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from core.authentication import TOKEN_USER
from core.leases import DEFAULT_LEASE_SECONDS
from core.roles import ROLES
from core.throttling import UserRateThrottle, count_call
from review.models import ReviewSettings
from review.queue import statements
from review.services import submit_sql

DROP = frozenset(filter(None, os.environ.get("BENCH_STATEMENTS_DROP", "").split(",")))
ROLE_NAMES = list(ROLES)
NO_CONTENT = 204


@cache
def _rate() -> tuple[int, int]:
    """The site's per-user rate (API_THROTTLE_USER): calls and period in seconds."""
    throttle = UserRateThrottle()
    return throttle.num_requests, int(throttle.duration)


def _authenticate(cursor: Any, request: HttpRequest) -> tuple[int, str] | None:
    """The token statement and the throttle's round trip (its answer unused: the floor never
    answers 429); the user's id and username (None: no such token)."""
    key = request.headers.get("Authorization", "")[6:]
    cursor.execute(TOKEN_USER, {"roles": ROLE_NAMES, "key": key})
    row = cursor.fetchone()
    if row is None:
        return None
    names = [column.name for column in cursor.description]
    user = dict(zip(names, row, strict=True))
    if "throttle" not in DROP:
        _limit, duration = _rate()
        window = int(time.time() // duration)
        count_call(f"throttle_user_{user['id']}:{window}", timeout=duration + 1)
    return user["id"], user["username"]


@csrf_exempt
def statements_claim(request: HttpRequest, dataset_id: int) -> HttpResponse:
    with connection.cursor() as cursor:
        user = _authenticate(cursor, request)
        if user is None:
            return HttpResponse(status=401)
        params = statements.claim_params(
            dataset_id=dataset_id,
            reviewer_id=user[0],
            lead=False,
            now=dt.datetime.now(tz=dt.UTC),
            default_lease_seconds=DEFAULT_LEASE_SECONDS,
            default_gold_rate=ReviewSettings.DEFAULT_GOLD_RATE,
        )
        cursor.execute(statements.CLAIM, params)
        row = cursor.fetchone()
    if row is None:
        return HttpResponse(status=NO_CONTENT)
    return JsonResponse({"lease": {"slot": row[0]}, "sample": {"id": row[1]}})


@csrf_exempt
def statements_submit(request: HttpRequest) -> HttpResponse:
    body = json.loads(request.body)
    sample_id, client_uuid = int(body["sample"]), uuid.UUID(body["client_uuid"])
    with connection.cursor() as cursor:
        user = _authenticate(cursor, request)
        if user is None:
            return HttpResponse(status=401)
        me = user[0]
    with transaction.atomic():
        locks = submit_sql.slots_lock(
            sample_id=sample_id, reviewer_id=me, client_uuid=client_uuid, read_sample=True
        )
        if locks.sample_json is None:
            return HttpResponse(status=404)
        dataset_id = json.loads(locks.sample_json)[0]["dataset_id"]
        mine = [s for s in locks.slots if s.reviewer_id == me and not s.done]
        if not mine:
            return HttpResponse(status=409)
        slot = mine[0]
        done = sum(1 for s in locks.slots if s.done and s.round == slot.round)
        settles = done + 1 >= (locks.overlap or 2)
        now = dt.datetime.now(tz=dt.UTC)
        fields = {
            "client_uuid": client_uuid, "decision": "accept", "reject_reason": "",
            "values": {}, "clarity": None, "naturalness": None, "image_aligned": None,
            "audio_aligned": None, "note": "", "seconds_spent": 3.0,
        }  # fmt: skip
        written = submit_sql.review_write(
            slot=slot,
            sample_id=sample_id,
            dataset_id=dataset_id,
            reviewer_id=me,
            fields=fields,
            leased_at=slot.leased_at,
            now=now,
            drop_draft=locks.has_draft,
            drop_skip=locks.has_skip,
            first_step_reason=None if settles else "First review submitted.",
            read_round=settles,
        )
        if settles:
            names = [c.reviewer for c in written.counted or []] + [user[1]]
            submit_sql.settle_write(
                sample_id=sample_id,
                dataset_id=dataset_id,
                by_id=me,
                settlement=submit_sql.Settlement(
                    from_status=written.status or "in_review",
                    to_status="verified",
                    reason=f"Verified: {', '.join(names)} agreed.",
                    agreement=True,
                    summary={
                        "reviewers": names,
                        "agreement": True,
                        "adjudicated": False,
                        "note": "",
                    },
                    close_open_slots=False,
                ),
            )
    return HttpResponse(
        b'{"id": %d}' % written.review_id, status=201, content_type="application/json"
    )
