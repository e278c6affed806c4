"""The floor site's "statements floor": the review loop's database and Redis work, nothing else.

Two views, served by the floor site (``bench/floor_urls.py``) for ``bench_review.py``'s
``statements`` phase only, never deployed. They send the very statements the real claim and
submit send today on PostgreSQL (``bench/profile_review.py --sql`` lists those), in the same
order and transactions, built by the product's own SQL builders and sent through the same
prepared-statement cursor (``core.prepared``), with the least Python around them: no DRF, no
serializers, no ORM, no model instances, a fixed answer.

- ``POST /floor/statements/claim/<dataset>/``: the token, its user and roles
  (``core.authentication``); the throttle (``core.throttling.count_call``: the user's
  ``INCR`` + ``EXPIRE`` in one round trip through redis-py, as the site's throttle sends
  them); the claim with the dataset's visibility test and the sample's card
  (``review.services.claim_sql.claim_card_sql``);
- ``POST /floor/statements/submit/``: the token and the throttle again; then in one
  transaction the slot lock reading the sample and its dataset with the visibility test
  (``review.services.slot_locks``), the review write with a first review's status step or,
  when the review settles the sample, the round's counted reviews
  (``review.services.submit_sql.review_write``), and the settlement (``settle_write``).

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
from types import SimpleNamespace
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from annotation.hot_selectors import member_test
from annotation.models import ChangeSource, Sample, SampleStatus
from annotation.services.status_sql import Statement, status_step_cte
from core.authentication import _token_user_sql
from core.lease_sql import DEFAULT_LEASE_SECONDS
from core.prepared import hot_cursor
from core.roles import ANNOTATOR, ROLES, roles_remember
from core.throttling import UserRateThrottle, count_call
from review.models import ReviewSettings, Slot
from review.services.claim_sql import claim_card_sql
from review.services.slot_locks import slots_locked_with_sample_sql
from review.services.submit_sql import Settlement, _counted_sql, _insert_sql, settle_write

DROP = frozenset(filter(None, os.environ.get("BENCH_STATEMENTS_DROP", "").split(",")))
ROLE_NAMES = list(ROLES)
NO_CONTENT = 204


@cache
def _rate() -> tuple[int, int]:
    """The site's per-user rate (API_THROTTLE_USER): calls and period in seconds."""
    throttle = UserRateThrottle()
    return throttle.num_requests, int(throttle.duration)


SAMPLES = Sample._meta.db_table
FILLED = f"filled AS (UPDATE {Slot._meta.db_table} SET done = true, reviewer_id = %s WHERE id = %s)"


@cache
def _member() -> str:
    """The visibility test of an annotator who is no lead, as the site builds it."""
    annotator = User(pk=0)
    roles_remember(annotator, [ANNOTATOR])
    member = member_test(user=annotator, role=ANNOTATOR, user_param="%s")
    assert member is not None
    return member


def _authenticate(cursor: Any, request: HttpRequest) -> tuple[int, str] | None:
    """The token statement and the site's throttle, with its round trips (its answer unused:
    the floor never answers 429); the user's id and username (None: no such token)."""
    key = request.headers.get("Authorization", "")[6:]
    cursor.execute(_token_user_sql(), [ROLE_NAMES, key])
    row = cursor.fetchone()
    if row is None:
        return None
    user_id: int = row[2]  # the user's columns follow the token's age and the roles
    if "throttle" not in DROP:
        _limit, duration = _rate()
        window = int(time.time() // duration)
        count_call(f"throttle_user_{user_id}:{window}", timeout=duration + 1)
    return user_id, row[6]


@csrf_exempt
def statements_claim(request: HttpRequest, dataset_id: int) -> HttpResponse:
    with hot_cursor() as cursor:
        user = _authenticate(cursor, request)
        if user is None:
            return HttpResponse(status=401)
        cursor.execute(
            claim_card_sql(skipped=False, member=_member().replace("%s", "%(me)s")),
            {
                "scope": dataset_id,
                "me": user[0],
                "now": dt.datetime.now(tz=dt.UTC),
                "default_lease": DEFAULT_LEASE_SECONDS,
                "default_gold_rate": ReviewSettings.DEFAULT_GOLD_RATE,
            },
        )
        row = cursor.fetchone()
    if row is None:
        return HttpResponse(status=NO_CONTENT)
    return JsonResponse({"lease": {"slot": row[0]}, "sample": {"id": row[3]}})


def _write(
    me: int, sample_id: int, dataset_id: int, client_uuid: uuid.UUID, slot: Any, settles: bool
) -> Any:
    """review_write's statement: the review, its slot, and a first review's status step or a
    settling review's read of the round; (review id, counted reviews as JSON text)."""
    now = dt.datetime.now(tz=dt.UTC)
    leased_at = slot[8] if slot[7] == me else None
    statement = Statement()
    row = [sample_id, dataset_id, me, client_uuid, "accept", "", "{}", None, None, None, None]
    statement.add(_insert_sql(), [*row, "", 3.0, slot[0], slot[3], leased_at, now])
    statement.add(FILLED, [me, slot[0]])
    select = ["(SELECT id FROM new_review)"]
    if settles:
        select += ["NULL", _counted_sql(), f"(SELECT status FROM {SAMPLES} WHERE id = %s)"]
        statement.params.extend([sample_id, slot[3], dataset_id, sample_id])
    else:
        status_step_cte(
            statement,
            name="stepped",
            sample_id=sample_id,
            from_status=SampleStatus.PENDING_REVIEW,
            to_status=SampleStatus.IN_REVIEW,
            by_id=me,
            source=ChangeSource.REVIEW,
            reason="First review submitted.",
            now=now,
        )
        select += ["(SELECT revision FROM stepped)", "NULL, NULL"]
    with hot_cursor() as cursor:
        cursor.execute(statement.sql("SELECT " + ", ".join(select)), statement.params)
        return cursor.fetchone()


@csrf_exempt
def statements_submit(request: HttpRequest) -> HttpResponse:
    body = json.loads(request.body)
    sample_id, client_uuid = int(body["sample"]), uuid.UUID(body["client_uuid"])
    with hot_cursor() as cursor:
        user = _authenticate(cursor, request)
    if user is None:
        return HttpResponse(status=401)
    me = user[0]
    with transaction.atomic(), hot_cursor() as cursor:
        cursor.execute(
            slots_locked_with_sample_sql(_member()), [client_uuid, me, me, me, me, sample_id]
        )
        slots = cursor.fetchall()
        if not slots:
            return HttpResponse(status=404)
        dataset_id = slots[0][1]
        mine = [s for s in slots if s[7] == me and not s[10]]
        if not mine:
            return HttpResponse(status=409)
        done = sum(1 for s in slots if s[10] and s[3] == mine[0][3])
        settles = done + 1 >= (slots[0][12] or 2)
        review_id, _revision, counted, _status = _write(
            me, sample_id, dataset_id, client_uuid, mine[0], settles
        )
        if settles:
            names = [entry[0] for entry in json.loads(counted or "[]")] + [user[1]]
            settle_write(
                sample=SimpleNamespace(pk=sample_id, dataset_id=dataset_id, status="in_review"),  # type: ignore[arg-type]
                by=SimpleNamespace(pk=me),  # type: ignore[arg-type]
                settlement=Settlement(
                    status="verified",
                    reason=f"Verified: {', '.join(names)} agreed.",
                    agreement=True,
                    summary={
                        "reviewers": names,
                        "agreement": True,
                        "adjudicated": False,
                        "note": "",
                    },
                    delete_open_slots=False,
                ),
            )
    return HttpResponse(b'{"id": %d}' % review_id, status=201, content_type="application/json")
