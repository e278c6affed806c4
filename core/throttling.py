"""The API's rate limits (API_THROTTLE_USER, API_THROTTLE_ANON): a counter per caller and
fixed window on the shared cache, which lets calls through while the cache is away.

What it buys over DRF's own throttles, which keep each caller's request times of the last
period in the cache: DRF reads the list, unpickles, trims and pickles it again and writes it
back, a get and a set per call, and two callers racing each other both pass on the same
stale list. Here a call costs one round trip and no unpickling (on Redis, a server-side
script that counts with ``INCR`` and sets the key's ``EXPIRE`` with the window's first call):
measured by ``bench/bench_throttle.py`` (docs/performance.md), 149 µs, 880 Python function
calls and 1 round trip per call against DRF's 336 µs, 1,593 and 2, on a loaded machine, with
``INCR`` and ``EXPIRE`` pipelined; the script sends one command instead of two, which redis-py
packs and parses with about a quarter fewer Python calls (``bench/profile_review.py``). And
the counter is atomic: never more than the rate is allowed in one window, whatever the
number of processes and threads, and the key never outlives its window (the script runs
whole or not at all). The price of fixed windows: across a
window's edge a caller may send up to twice the rate, never more. Retry-After is the time
to the window's end.

A cache that does not answer (Redis down) never turns an API call into a 500: the call is let
through, counted (``failed_open()``, per process) and logged, the first time with the error
and then at most once a minute with the count since, until the cache answers again.

On Redis the counter goes through a redis-py client of the cache's own location and options
(redis-py's public API, ``register_script``: Django's ``RedisCache`` runs no script), under
the key Django's cache gives it (``make_key``); Django's serializer stores integers
unpickled, so ``cache.get`` reads the count. ``tests/core/test_throttling.py`` pins both.
Other caches (the database cache of the local demo, the tests' local memory) count with
``cache.add`` + ``cache.incr``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import redis
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import DatabaseError
from redis.commands.core import Script
from redis.exceptions import RedisError
from rest_framework import throttling

if TYPE_CHECKING:  # DRF imports this module while it builds its views: no runtime import
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

CACHE_ERRORS = (RedisError, OSError, DatabaseError)
REPORT_EVERY_SECONDS = 60.0

# One call counted: the count, and the key's expiry set with the window's first call (KEYS[1]
# the counter, ARGV[1] its lifetime in seconds).
COUNT_SCRIPT = """
local calls = redis.call('INCR', KEYS[1])
if calls == 1 then
    redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return calls
"""


def count_call(name: str, *, timeout: int) -> int:
    """Count one call under ``name`` in the default cache (the key expires ``timeout``
    seconds after the first call it counted); the calls counted so far, this one included."""
    counter = _redis_counter()
    if counter is not None:
        return int(counter.script(keys=[counter.make_key(name)], args=[timeout]))
    cache = caches["default"]
    cache.add(name, 0, timeout)
    try:
        return int(cache.incr(name))
    except ValueError:  # expired between the two calls: this call starts a new count
        cache.add(name, 1, timeout)
        return 1


@dataclass(frozen=True)
class RedisCounter:
    """How calls are counted on a default cache that is Redis: a redis-py client of the
    cache's first server with its options (its connection pool is thread-safe, and starts
    anew in a forked process), :data:`COUNT_SCRIPT` registered on it (redis-py sends it by its
    digest, and loads it again when the server does not know it), and the cache's
    ``make_key`` (a function of the cache's settings only)."""

    client: redis.Redis
    script: Script
    make_key: Callable[[str], str]


# By the default cache's settings as written: one counter per process and configuration
# (None: the cache is not Redis), looked up without Django's per-thread cache handler.
_counters: dict[str, RedisCounter | None] = {}
_counters_lock = threading.Lock()


def _redis_counter() -> RedisCounter | None:
    conf = settings.CACHES["default"]
    configuration = repr(conf)
    try:
        return _counters[configuration]
    except KeyError:
        pass
    with _counters_lock:
        if configuration not in _counters:
            cache = caches["default"]
            counter = None
            if isinstance(cache, RedisCache):
                location = conf["LOCATION"]
                url = str(location[0] if isinstance(location, list | tuple) else location)
                client = redis.Redis.from_url(url.split(",")[0], **conf.get("OPTIONS", {}))
                counter = RedisCounter(client, client.register_script(COUNT_SCRIPT), cache.make_key)
            _counters[configuration] = counter
        return _counters[configuration]


def redis_of(cache: RedisCache) -> redis.Redis:
    """The redis-py client that counts calls on ``cache``, the default cache."""
    counter = _redis_counter()
    if counter is None:
        raise TypeError(f"the default cache is not Redis: {cache!r}")
    return counter.client


class _FailedOpen:
    """This process's calls let through because the cache did not answer, and when they were
    last reported in the log."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = 0
        self._unreported = 0
        self._reported_at: float | None = None

    def record(self, error: Exception) -> None:
        now = time.monotonic()
        with self._lock:
            self.total += 1
            self._unreported += 1
            last = self._reported_at
            first = last is None
            if last is not None and now - last < REPORT_EVERY_SECONDS:
                return
            count, self._unreported, self._reported_at = self._unreported, 0, now
        if first:
            logger.warning(
                "API rate limit not applied: the cache does not answer (%s); calls are let "
                "through until it does",
                error,
                exc_info=error,
            )
        else:
            logger.warning(
                "API rate limit not applied: %d calls let through in the last %.0f s "
                "(the cache does not answer: %s)",
                count,
                REPORT_EVERY_SECONDS,
                error,
            )

    def recovered(self) -> None:
        if self._reported_at is None:  # the usual case: nothing to report, no lock taken
            return
        with self._lock:
            if self._reported_at is None:
                return
            count, self._unreported, self._reported_at = self._unreported, 0, None
        logger.warning(
            "API rate limit applied again: the cache answers (%d calls let through since "
            "the last report)",
            count,
        )


FAILED_OPEN = _FailedOpen()


def failed_open() -> int:
    """Calls this process let through because the cache did not answer."""
    return FAILED_OPEN.total


class FixedWindowThrottle(throttling.SimpleRateThrottle):
    """DRF's SimpleRateThrottle counting calls in fixed windows of its period (the key is the
    subclass's ``get_cache_key``, DRF's own)."""

    window_end: float | None = None
    num_requests: int  # set by DRF from the rate
    duration: int

    def allow_request(self, request: Request, view: APIView) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        window = int(self.now // self.duration)
        self.window_end = float((window + 1) * self.duration)
        try:
            calls = count_call(f"{self.key}:{window}", timeout=int(self.duration) + 1)
        except CACHE_ERRORS as error:
            FAILED_OPEN.record(error)
            return True
        FAILED_OPEN.recovered()
        return bool(calls <= self.num_requests)

    def wait(self) -> float | None:
        if self.window_end is None:
            return None
        return max(self.window_end - self.now, 0.0)


class UserRateThrottle(FixedWindowThrottle, throttling.UserRateThrottle):
    """Calls per signed-in user (``API_THROTTLE_USER``; DRF's key: the user, or the address
    of an anonymous caller)."""


class AnonRateThrottle(FixedWindowThrottle, throttling.AnonRateThrottle):
    """Calls per anonymous address (``API_THROTTLE_ANON``)."""
