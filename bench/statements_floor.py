"""The floor site's "statements floor": the review loop's database and Redis work, nothing else.

Two views, served by the floor site (``bench/floor_urls.py``) for ``bench_review.py``'s
``statements`` phase only, never deployed. They send the very statements the real claim and
submit send today on PostgreSQL (``bench/profile_review.py --sql`` lists those), in the same
order and transactions, built by the product's own SQL builders where it has them, with the
least Python around them: no DRF, no serializers, no ORM, no model instances, a fixed answer.

- ``POST /floor/statements/claim/<dataset>/``: the token, its user and roles
  (``core.authentication``); the throttle (``core.throttling.allow_call``: a block's
  ``INCRBY`` + ``EXPIRE`` in one round trip through ``core.redis_wire`` when this process's
  reserved calls are spent, none otherwise); the dataset's visibility
  (``annotation.hot_selectors.dataset_visible``); the claim (``review.services.claim_sql``);
  the sample card (``hot_selectors.sample_card``);
- ``POST /floor/statements/submit/``: the token and the throttle again; the sample's
  visibility (``hot_selectors.sample_visible``); then in one transaction the slot lock
  (``review.services.slot_locks``), the review write with a first review's status step or,
  when the review settles the sample, the round's counted reviews
  (``review.services.submit_sql.review_write``), and the settlement (``settle_write``).

The reviewer is the token's user and the sample the one the client sends, so the queue's
rules hold as on the site (the lock serialises a sample's submissions; only the reviewer's
own leased slot is filled). ``BENCH_STATEMENTS_DROP`` (comma-separated: ``throttle``,
``dataset``, ``card``, ``sample``) leaves out those round trips, to see what fewer
statements would give.
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

from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from annotation.models import (
    ChangeSource,
    Dataset,
    DatasetMembership,
    MediaAsset,
    Sample,
    SampleMedia,
    SampleStatus,
)
from annotation.services.status_sql import Statement, status_step_cte
from core.authentication import _token_user_sql
from core.lease_sql import DEFAULT_LEASE_SECONDS
from core.redis_wire import cache_redis
from core.roles import ROLES
from core.rows import columns
from core.throttling import UserRateThrottle, allow_call
from review.consensus import IMAGE_QUESTION_FIELDS
from review.models import ReviewSettings, Slot
from review.services.claim_sql import CLAIM_NEXT
from review.services.slot_locks import slots_locked_sql
from review.services.submit_sql import Settlement, _counted_sql, _insert_sql, settle_write

DROP = frozenset(filter(None, os.environ.get("BENCH_STATEMENTS_DROP", "").split(",")))
ROLE_NAMES = list(ROLES)
CARD_FIELDS = ("external_id", "status", "question", *IMAGE_QUESTION_FIELDS)
NO_CONTENT = 204


@cache
def _rate() -> tuple[int, int]:
    """The site's per-user rate (API_THROTTLE_USER): calls and period in seconds."""
    throttle = UserRateThrottle()
    return throttle.num_requests, int(throttle.duration)


@cache
def _sql() -> dict[str, str]:
    """The statements of hot_selectors, as its functions build them on every call."""
    members = DatasetMembership._meta.db_table
    member = f"EXISTS (SELECT 1 FROM {members} m WHERE m.dataset_id = d.id AND m.user_id = %s)"
    _names, dataset_columns = columns(Dataset, "d")
    _names, sample_columns = columns(Sample, "s")
    card = ", ".join(f's."{Sample._meta.get_field(n).column}"' for n in CARD_FIELDS)  # type: ignore[union-attr]
    return {
        "dataset": f"SELECT {dataset_columns} FROM {Dataset._meta.db_table} d "
        f"WHERE d.id = %s AND {member}",
        "sample": f"SELECT {sample_columns}, {dataset_columns} FROM {Sample._meta.db_table} s "
        f"JOIN {Dataset._meta.db_table} d ON d.id = s.dataset_id WHERE s.id = %s AND {member}",
        "card": f"SELECT {card}, m.role, m.asset_id, a.mime_type FROM {Sample._meta.db_table} s "
        f"LEFT JOIN {SampleMedia._meta.db_table} m ON m.sample_id = s.id "
        f"LEFT JOIN {MediaAsset._meta.db_table} a ON a.id = m.asset_id "
        "WHERE s.id = %s ORDER BY m.role, m.position",
        "filled": f"filled AS (UPDATE {Slot._meta.db_table} SET done = true, reviewer_id = %s "
        "WHERE id = %s)",
    }


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
        shared = cache_redis()
        if shared is not None:
            client, prefix = shared
            limit, duration = _rate()
            counter = f"{prefix}:throttle:throttle_user_{user_id}"
            allow_call(client, counter, limit=limit, duration=duration, now=time.time())
    return user_id, row[6]


@csrf_exempt
def statements_claim(request: HttpRequest, dataset_id: int) -> HttpResponse:
    sql = _sql()
    with connection.cursor() as cursor:
        user = _authenticate(cursor, request)
        if user is None:
            return HttpResponse(status=401)
        me = user[0]
        if "dataset" not in DROP:
            cursor.execute(sql["dataset"], [dataset_id, me])
            if cursor.fetchone() is None:
                return HttpResponse(status=403)
        cursor.execute(
            CLAIM_NEXT,
            {
                "scope": dataset_id,
                "me": me,
                "now": dt.datetime.now(tz=dt.UTC),
                "default_lease": DEFAULT_LEASE_SECONDS,
                "default_gold_rate": ReviewSettings.DEFAULT_GOLD_RATE,
            },
        )
        row = cursor.fetchone()
        if row is None:
            return HttpResponse(status=NO_CONTENT)
        if "card" not in DROP:
            cursor.execute(sql["card"], [row[3]])
            cursor.fetchall()
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
    statement.add(_sql()["filled"], [me, slot[0]])
    select = ["(SELECT id FROM new_review)"]
    if settles:
        select += ["NULL", _counted_sql()]
        statement.params.extend([sample_id, slot[3], dataset_id])
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
        select += ["(SELECT revision FROM stepped)", "NULL"]
    with connection.cursor() as cursor:
        cursor.execute(statement.sql("SELECT " + ", ".join(select)), statement.params)
        return cursor.fetchone()


@csrf_exempt
def statements_submit(request: HttpRequest) -> HttpResponse:
    body = json.loads(request.body)
    sample_id, client_uuid = int(body["sample"]), uuid.UUID(body["client_uuid"])
    dataset_id = int(request.headers.get("X-Dataset", 0))  # without the sample read
    with connection.cursor() as cursor:
        user = _authenticate(cursor, request)
        if user is None:
            return HttpResponse(status=401)
        me = user[0]
        if "sample" not in DROP:
            cursor.execute(_sql()["sample"], [sample_id, me])
            row = cursor.fetchone()
            if row is None:
                return HttpResponse(status=404)
            dataset_id = row[1]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(slots_locked_sql(), [client_uuid, me, me, me, sample_id])
        slots = cursor.fetchall()
        mine = [s for s in slots if s[7] == me and not s[10]]
        if not mine:
            return HttpResponse(status=409)
        done = sum(1 for s in slots if s[10] and s[3] == mine[0][3])
        settles = done + 1 >= (slots[0][12] or 2)
        review_id, _revision, counted = _write(
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
