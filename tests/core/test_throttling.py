"""The API's per-user rate limit on Redis (core/throttling.py): blocks of calls reserved per
process from one counter per window."""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import UserRateThrottle

from core import throttling
from core.redis_wire import RedisWire, cache_redis
from core.throttling import Allowances, allow_call, block_size, granted


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[RedisWire, str]]:
    """The cache's Redis and key prefix, a fresh process-wide allowance table, and a count of
    the blocks reserved (``shared[0].reserved``) kept while the test runs."""
    found = cache_redis()
    assert found is not None
    client, prefix = found
    monkeypatch.setattr(throttling, "ALLOWANCES", Allowances())
    execute = client.execute
    reserved: list[tuple[Any, ...]] = []

    def counting(*commands: tuple[str | int | bytes, ...]) -> Any:
        reserved.extend(c for c in commands if c[0] == "INCRBY")
        return execute(*commands)

    monkeypatch.setattr(client, "execute", counting)
    monkeypatch.setattr(client, "reserved", reserved, raising=False)
    yield client, prefix
    monkeypatch.undo()
    names = client.execute(("KEYS", f"{prefix}:throttle:*"))[0]
    if isinstance(names, list) and names:
        client.execute(("DEL", *names))


def _reserved(client: RedisWire) -> list[tuple[Any, ...]]:
    return client.reserved  # type: ignore[attr-defined, no-any-return]


def _counter() -> str:
    return f"test-{uuid.uuid4().hex}"


def test_a_block_is_a_hundredth_of_the_rate_and_at_least_one_call() -> None:
    """The default 3000/minute reserves 30 calls at a time; under 200 calls, one at a time."""
    assert [block_size(n) for n in (3000, 200, 199, 30, 3, 0)] == [30, 2, 1, 1, 1, 1]


def test_a_block_is_granted_only_as_far_as_the_limit() -> None:
    """A block that fits under the limit is granted whole, the one that crosses it in part,
    and any after it not at all."""
    assert granted(total=30, block=30, limit=3000) == 30
    assert granted(total=3000, block=30, limit=3000) == 30
    assert granted(total=3010, block=30, limit=3000) == 20
    assert granted(total=3030, block=30, limit=3000) == 0
    assert granted(total=3060, block=30, limit=3000) < 0


def test_a_reserved_block_is_spent_locally_then_the_window_is_refused_locally() -> None:
    """Calls are taken from the block until it is spent; once Redis reached the limit, a spent
    table refuses without asking for another block."""
    table = Allowances()
    assert table.take("k:1", now=0.0) is None  # nothing reserved yet
    assert table.add("k:1", end=60.0, total=10, block=10, limit=25) is True
    assert [table.take("k:1", now=1.0) for _ in range(9)] == [True] * 9
    assert table.take("k:1", now=1.0) is None  # spent: the next block is needed
    assert table.add("k:1", end=60.0, total=30, block=10, limit=25) is True  # 5 of 10 granted
    assert [table.take("k:1", now=2.0) for _ in range(5)] == [True] * 4 + [False]


def test_the_counters_of_past_windows_are_dropped() -> None:
    """An entry lives until its window ends, so the table never holds more than the windows
    in progress."""
    table = Allowances()
    for user in range(50):
        table.add(f"u{user}:16", end=1020.0, total=3, block=1, limit=3)
    table.add("u0:17", end=1080.0, total=3, block=1, limit=3)
    assert len(table) == 51
    assert table.take("u0:17", now=1019.0) is False
    assert len(table) == 51
    assert table.take("u0:17", now=1020.0) is False  # the first window's end: 16 goes
    assert len(table) == 1
    assert table.take("u0:18", now=1080.0) is None
    assert len(table) == 0


@pytest.mark.redis
def test_a_caller_below_the_rate_costs_one_round_trip_per_block(
    shared: tuple[RedisWire, str],
) -> None:
    """At 1000 calls a minute (blocks of 10), 25 calls send Redis three reservations, and the
    counter holds the 30 calls reserved."""
    client, prefix = shared
    counter = f"{prefix}:throttle:{_counter()}"
    table = Allowances()
    answers = [
        allow_call(client, counter, limit=1000, duration=60, now=1000.0, allowances=table)
        for _ in range(25)
    ]
    assert answers == [(True, 1020.0)] * 25
    assert _reserved(client) == [("INCRBY", f"{counter}:16", 10)] * 3
    assert client.execute(("GET", f"{counter}:16")) == [b"30"]


@pytest.mark.redis
def test_processes_together_never_pass_the_rate_and_are_refused_early_by_little(
    shared: tuple[RedisWire, str],
) -> None:
    """Four processes (four allowance tables) calling in a random order until all are refused
    allow exactly the rate between them when every block is spent, never more; a refusal
    comes at most (processes - 1) x B calls before the rate, and a refused process asks Redis
    nothing more."""
    client, prefix = shared
    counter = f"{prefix}:throttle:{_counter()}"
    limit, block = 1055, 10  # the last block is granted in part
    tables = [Allowances() for _ in range(4)]
    allowed = [0] * len(tables)
    refused_at: list[int] = []
    rng = random.Random(7)
    live = set(range(len(tables)))
    while live:
        process = rng.choice(sorted(live))
        ok, _end = allow_call(
            client, counter, limit=limit, duration=60, now=1000.0, allowances=tables[process]
        )
        if ok:
            allowed[process] += 1
        else:
            refused_at.append(sum(allowed))
            live.discard(process)
    assert sum(allowed) == limit  # every block spent: all of the rate, not one call more
    assert all(at >= limit - (len(tables) - 1) * block for at in refused_at)
    trips = len(_reserved(client))
    for table in tables:
        assert allow_call(
            client, counter, limit=limit, duration=60, now=1001.0, allowances=table
        ) == (False, 1020.0)
    assert len(_reserved(client)) == trips


@pytest.mark.redis
def test_a_second_process_spends_what_the_first_left_and_no_more(
    shared: tuple[RedisWire, str],
) -> None:
    """A process that reserved a block and spent half of it makes the other process's caller
    refused five calls early; the first process then allows its five, and the two together
    allow exactly the rate."""
    client, prefix = shared
    counter = f"{prefix}:throttle:{_counter()}"
    first, second = Allowances(), Allowances()

    def call(table: Allowances) -> bool:
        return allow_call(client, counter, limit=1000, duration=60, now=0.0, allowances=table)[0]

    assert all(call(first) for _ in range(5))
    from_second = 0
    while call(second):
        from_second += 1
    assert from_second == 990
    assert [call(first) for _ in range(6)] == [True] * 5 + [False]
    assert 5 + from_second + 5 == 1000


@pytest.mark.redis
def test_threads_of_one_process_share_its_blocks_without_losing_a_call(
    shared: tuple[RedisWire, str],
) -> None:
    """Eight threads calling at once through one table are all allowed below the rate, and
    every call Redis reserved is either spent or still left in the table."""
    client, prefix = shared
    counter = f"{prefix}:throttle:{_counter()}"
    table = Allowances()
    start = threading.Barrier(8)
    answers: list[bool] = []

    def calls() -> None:
        start.wait()
        mine = [
            allow_call(client, counter, limit=1000, duration=60, now=0.0, allowances=table)[0]
            for _ in range(100)
        ]
        answers.extend(mine)

    threads = [threading.Thread(target=calls) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [True] * 800
    raw = client.execute(("GET", f"{counter}:0"))[0]
    assert isinstance(raw, bytes)
    total = int(raw)
    assert total % 10 == 0 and 800 <= total <= 800 + 8 * 10
    left = table._counters[f"{counter}:0"].left
    assert total == 800 + left


@pytest.mark.django_db
@pytest.mark.redis
def test_a_caller_past_the_rate_waits_for_the_next_window(
    monkeypatch: pytest.MonkeyPatch, annotator: Any, shared: tuple[RedisWire, str]
) -> None:
    """Past the rate, calls get 429 with a Retry-After no longer than the period, and
    another user keeps their own count."""
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "3/minute"})
    clock = [1000.0]  # 40 s into the window [960, 1020)
    monkeypatch.setattr(throttling.UserRateThrottle, "timer", lambda self: clock[0])
    client = APIClient()
    client.force_authenticate(annotator)
    codes = [client.get(reverse("api_me")).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert client.get(reverse("api_me")).headers["Retry-After"] == "20"
    clock[0] = 1020.0  # the next window
    assert client.get(reverse("api_me")).status_code == 200
    other = APIClient()
    other.force_authenticate(type(annotator).objects.create_user(username="other-caller"))
    assert other.get(reverse("api_me")).status_code == 200


@pytest.mark.django_db
@pytest.mark.redis
def test_a_refused_caller_costs_no_round_trip_until_the_window_ends(
    monkeypatch: pytest.MonkeyPatch, annotator: Any, shared: tuple[RedisWire, str]
) -> None:
    """At 200 calls a minute (blocks of 2) a caller gets exactly 200 calls in a window from
    100 reservations, the last of which reached the limit; refused calls then ask Redis
    nothing, and the next window starts from a fresh counter with the past window's local
    state gone."""
    redis_client, prefix = shared
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "200/minute"})
    clock = [1000.0]
    monkeypatch.setattr(throttling.UserRateThrottle, "timer", lambda self: clock[0])
    client = APIClient()
    client.force_authenticate(annotator)
    codes = [client.get(reverse("api_me")).status_code for _ in range(200)]
    assert codes == [200] * 200
    assert len(_reserved(redis_client)) == 100
    refused = [client.get(reverse("api_me")) for _ in range(3)]
    assert [r.status_code for r in refused] == [429] * 3
    assert refused[-1].headers["Retry-After"] == "20"
    assert len(_reserved(redis_client)) == 100
    clock[0] = 1020.0
    assert client.get(reverse("api_me")).status_code == 200
    key = f"{prefix}:throttle:throttle_user_{annotator.pk}"
    assert redis_client.execute(("GET", f"{key}:16"), ("GET", f"{key}:17")) == [b"200", b"2"]
    assert len(throttling.ALLOWANCES) == 1


@pytest.mark.django_db
@pytest.mark.redis
def test_the_windows_counter_expires_with_the_window(
    monkeypatch: pytest.MonkeyPatch, annotator: Any, shared: tuple[RedisWire, str]
) -> None:
    """One counter per user and window, holding the calls reserved (whole blocks: 5 at 500 a
    minute) and set to expire just after the window, so counters of past windows never pile
    up."""
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "500/minute"})
    monkeypatch.setattr(throttling.UserRateThrottle, "timer", lambda self: 1000.0)
    redis_client, prefix = shared
    client = APIClient()
    client.force_authenticate(annotator)
    for _ in range(3):
        assert client.get(reverse("api_me")).status_code == 200
    key = f"{prefix}:throttle:throttle_user_{annotator.pk}:16"
    count, ttl, _deleted = redis_client.execute(("GET", key), ("TTL", key), ("DEL", key))
    assert count == b"5"
    assert isinstance(ttl, int) and 0 < ttl <= 61


@pytest.mark.django_db
@pytest.mark.redis
def test_without_the_wire_client_drfs_own_throttle_counts(
    monkeypatch: pytest.MonkeyPatch, annotator: Any, shared: tuple[RedisWire, str]
) -> None:
    """When the cache is not reached through core.redis_wire, DRF's throttle on the cache
    limits the caller and no block is reserved."""
    monkeypatch.setattr(throttling, "cache_redis", lambda: None)
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "3/minute"})
    client = APIClient()
    client.force_authenticate(annotator)
    try:
        codes = [client.get(reverse("api_me")).status_code for _ in range(4)]
    finally:
        cache.delete(f"throttle_user_{annotator.pk}")
    assert codes == [200, 200, 200, 429]
    assert _reserved(shared[0]) == []
    assert len(throttling.ALLOWANCES) == 0
