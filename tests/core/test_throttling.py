"""The API's rate limits (core/throttling.py): a counter per caller and fixed window on the
shared cache, one round trip per call on Redis, letting calls through while the cache is away."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache, caches
from django.urls import reverse
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.throttling import UserRateThrottle as DRFUserRateThrottle

from core import throttling
from core.throttling import AnonRateThrottle, count_call, failed_open
from tests.support.processes import free_port

REDIS_CACHE = "django.core.cache.backends.redis.RedisCache"


def _name() -> str:
    return f"test-{uuid.uuid4().hex}"


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The throttles' clock, 40 s into the minute [960, 1020)."""
    now = [1000.0]
    monkeypatch.setattr(throttling.FixedWindowThrottle, "timer", lambda self: now[0])
    return now


@pytest.fixture
def on_redis(settings: Any) -> Iterator[Any]:
    """The default cache on Redis (as in production); its keys of this test deleted after."""
    if settings.CACHES["default"]["BACKEND"] != REDIS_CACHE:
        pytest.skip("the cache is not Redis here")
    yield caches["default"]


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every write of redis-py to a server while the test runs (one per round trip)."""
    import redis.connection

    sent: list[int] = []
    original = redis.connection.Connection.send_packed_command

    def counting(self: Any, command: Any, check_health: bool = True) -> None:
        sent.append(1)
        original(self, command, check_health)  # type: ignore[no-untyped-call]

    monkeypatch.setattr(redis.connection.Connection, "send_packed_command", counting)
    return sent


@pytest.mark.django_db
def test_a_caller_past_the_rate_waits_for_the_next_window(
    monkeypatch: pytest.MonkeyPatch, annotator: Any, clock: list[float]
) -> None:
    """Past the rate, calls get 429 with a Retry-After of the time to the window's end; the
    next window starts afresh, and another user keeps their own count."""
    monkeypatch.setattr(DRFUserRateThrottle, "THROTTLE_RATES", {"user": "3/minute"})
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


def test_anonymous_callers_are_counted_by_address(
    monkeypatch: pytest.MonkeyPatch, clock: list[float]
) -> None:
    """The anonymous limit counts per address in the same fixed windows."""
    monkeypatch.setattr(AnonRateThrottle, "THROTTLE_RATES", {"anon": "2/minute"})
    factory = APIRequestFactory()

    def allowed(address: str) -> bool:
        from django.contrib.auth.models import AnonymousUser

        request = Request(factory.get("/api/x/", REMOTE_ADDR=address))
        request.user = AnonymousUser()
        return AnonRateThrottle().allow_request(request, None)  # type: ignore[arg-type]

    assert [allowed("10.9.0.1") for _ in range(3)] == [True, True, False]
    assert allowed("10.9.0.2")


@pytest.mark.redis
def test_a_call_is_one_round_trip_and_the_counter_expires_with_its_window(
    on_redis: Any, round_trips: list[int]
) -> None:
    """On Redis a call is one round trip (the counting script, which the server keeps once
    loaded); the count is read back through Django's cache API (its serializer stores
    integers as they are), and the key expires a second after the window, however many
    calls it counted."""
    warm_up, name = _name(), _name()
    count_call(warm_up, timeout=61)  # loads the script on the server, if it was not there
    round_trips.clear()
    assert [count_call(name, timeout=61) for _ in range(3)] == [1, 2, 3]
    assert len(round_trips) == 3
    assert cache.get(name) == 3
    key = on_redis.make_and_validate_key(name)
    ttl = throttling.redis_of(on_redis).ttl(key)
    assert 0 < ttl <= 61
    cache.delete(name)
    cache.delete(warm_up)


@pytest.mark.redis
def test_the_count_survives_a_server_that_forgot_the_script(on_redis: Any) -> None:
    """A Redis that does not know the script by its digest (after a restart or ``SCRIPT
    FLUSH``; here a digest it never saw) is sent the script again: the count goes on and the
    key still expires."""
    name = _name()
    assert count_call(name, timeout=61) == 1
    counter = throttling._redis_counter()
    assert counter is not None
    digest, counter.script.sha = counter.script.sha, "0" * 40
    assert count_call(name, timeout=61) == 2
    assert counter.script.sha == digest
    assert 0 < throttling.redis_of(on_redis).ttl(on_redis.make_and_validate_key(name)) <= 61
    cache.delete(name)


@pytest.mark.redis
def test_threads_together_never_pass_the_rate(on_redis: Any, settings: Any) -> None:
    """Eight threads calling 50 times each against a rate of 100: exactly 100 calls pass."""
    name = _name()
    answers: list[int] = []
    lock = threading.Lock()

    def caller() -> None:
        mine = [count_call(name, timeout=61) for _ in range(50)]
        with lock:
            answers.extend(mine)

    threads = [threading.Thread(target=caller) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == list(range(1, 401))
    assert sum(1 for n in answers if n <= 100) == 100
    cache.delete(name)


@pytest.mark.redis
def test_djangos_redis_cache_connections_do_not_retry(on_redis: Any, settings: Any) -> None:
    """What the fail-open path relies on: the counter's connections (redis-py's, of the
    cache's location and options) make one attempt (redis-py retries only when asked to),
    within the cache's timeouts."""
    client = throttling.redis_of(on_redis)
    pool = client.connection_pool
    connection = pool.connection_class(**pool.connection_kwargs)
    assert connection.retry.get_retries() == 0
    timeout = settings.CACHE_TIMEOUT_SECONDS
    assert connection.socket_timeout == connection.socket_connect_timeout == timeout


@pytest.mark.django_db
def test_a_cache_that_does_not_answer_lets_calls_through_counted_and_logged(
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    annotator: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """With the cache's Redis gone, API calls are answered (not 500, not refused): each is
    counted, the first logged with the error, the others within the minute only counted;
    once the cache answers again, the limit applies again and the log says so."""
    monkeypatch.setattr(DRFUserRateThrottle, "THROTTLE_RATES", {"user": "2/minute"})
    monkeypatch.setattr(throttling, "FAILED_OPEN", throttling._FailedOpen())
    settings.CACHES = {
        "default": {
            "BACKEND": REDIS_CACHE,
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    client = APIClient()
    client.force_authenticate(annotator)
    with caplog.at_level(logging.WARNING, logger="core.throttling"):
        codes = [client.get(reverse("api_me")).status_code for _ in range(4)]
    assert codes == [200] * 4
    assert failed_open() == 4
    messages = [r.getMessage() for r in caplog.records if r.name == "core.throttling"]
    assert len(messages) == 1 and "rate limit not applied" in messages[0]
    assert "Connection refused" in messages[0] or "connecting" in messages[0]

    caplog.clear()
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    with caplog.at_level(logging.WARNING, logger="core.throttling"):
        codes = [client.get(reverse("api_me")).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    assert failed_open() == 4
    messages = [r.getMessage() for r in caplog.records if r.name == "core.throttling"]
    assert len(messages) == 1 and "applied again" in messages[0] and "3 calls" in messages[0]


def test_a_long_outage_is_reported_once_a_minute_with_the_count(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """While the cache stays away, the log says how many calls went through each minute."""
    now = [100.0]
    monkeypatch.setattr("core.throttling.time.monotonic", lambda: now[0])
    record = throttling._FailedOpen()
    error = ConnectionError("gone")
    with caplog.at_level(logging.WARNING, logger="core.throttling"):
        for step in range(130):
            now[0] = 100.0 + step  # one call a second
            record.record(error)
    messages = [r.getMessage() for r in caplog.records]
    assert record.total == 130
    assert len(messages) == 3
    assert "60 calls let through in the last 60 s" in messages[1]
    assert "60 calls" in messages[2]
