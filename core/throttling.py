"""The API's per-user rate limit, counted on Redis in blocks of calls reserved per process.

DRF's ``UserRateThrottle`` keeps every request's time of the last period in the cache: a get
and a set per request, the list unpickled, trimmed and pickled again. On the review loop that
was the largest cost after the submission itself. With the cache on Redis, this counts the
calls of each fixed window of the period instead, and even one round trip per call was a
measurable share of the CPU: so each web process reserves calls in blocks of
B = max(1, rate // 100) (``INCRBY`` by B and ``EXPIRE`` pipelined: one round trip, through
core.redis_wire rather than redis-py) and spends its block locally. A caller below the rate
then costs one round trip per B calls per process.

Redis holds what every process reserved, so no more than the rate is ever allowed in one
window, whatever the number of processes. A caller may be refused slightly early: the calls
other processes reserved and did not spend, at most (processes - 1) x B in a window (30 per
extra process at the default 3000/minute). Near the limit, a call may also be refused while
another thread of its process is fetching the caller's last block (the calls that block
brings serve the caller's next calls). Across a window's edge a caller may send up to twice
the rate, never more; Retry-After is the time to the window's end. A rate under 200 calls
(a test's 3/minute) gives B = 1: one round trip per call, as exact as a plain counter.
Without Redis (the local demo, tests without it), DRF's own throttle runs; the anonymous
limit is DRF's throttle in any case.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rest_framework import throttling

from core.redis_wire import RedisWire, RedisWireError, cache_redis

if TYPE_CHECKING:  # DRF imports this module while it builds its views: no runtime import
    from rest_framework.request import Request
    from rest_framework.views import APIView


def block_size(limit: int) -> int:
    """The calls a process reserves at once: a hundredth of the rate, so the early refusal
    stays a small share of it."""
    return max(1, limit // 100)


def granted(total: int, block: int, limit: int) -> int:
    """The calls of a block that fit under the limit, from the counter's value once the block
    was added (``total``); 0 or less when the window's calls are all reserved."""
    return min(block, limit - (total - block))


@dataclass(slots=True)
class _Counter:
    end: float  # the window's end: the entry is dropped then
    left: int = 0  # reserved and not yet spent
    final: bool = False  # Redis holds the limit: no further block can be granted


class Allowances:
    """One process's calls reserved from Redis and not yet spent, per counter (a caller's
    key and window).

    Threads share it (gunicorn's gthread workers), hence the lock; the round trip itself runs
    outside the lock, so a reservation never holds up other callers. Counters of past windows
    are dropped when the first of them ends, so the table holds only live windows.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, _Counter] = {}
        self._purge_at = math.inf

    def __len__(self) -> int:
        return len(self._counters)

    def take(self, name: str, now: float) -> bool | None:
        """Spend one reserved call: True when one was left, False when the window's calls
        are all reserved and spent (refused with no round trip), None when a block has to be
        reserved first."""
        with self._lock:
            if now >= self._purge_at:
                self._purge(now)
            counter = self._counters.get(name)
            if counter is None:
                return None
            if counter.left > 0:
                counter.left -= 1
                return True
            return False if counter.final else None

    def add(self, name: str, end: float, total: int, block: int, limit: int) -> bool:
        """Record a reserved block (``total``: the counter's value once it was added) and spend
        one call; False when nothing is left to spend."""
        calls = granted(total, block, limit)
        with self._lock:
            counter = self._counters.get(name)
            if counter is None:
                counter = self._counters[name] = _Counter(end)
                self._purge_at = min(self._purge_at, end)
            if total >= limit:
                counter.final = True
            if calls > 0:
                counter.left += calls
            if counter.left > 0:  # another thread's block may have arrived meanwhile
                counter.left -= 1
                return True
            return False

    def clear(self) -> None:
        with self._lock:
            self._counters.clear()
            self._purge_at = math.inf

    def _purge(self, now: float) -> None:
        self._counters = {n: c for n, c in self._counters.items() if c.end > now}
        self._purge_at = min((c.end for c in self._counters.values()), default=math.inf)


ALLOWANCES = Allowances()  # this process's


def allow_call(
    client: RedisWire,
    counter: str,
    *,
    limit: int,
    duration: int,
    now: float,
    allowances: Allowances | None = None,
) -> tuple[bool, float]:
    """Whether one more call fits under ``limit`` calls per ``duration`` seconds, and the end
    of the current window. ``counter``: the Redis key without its window; ``allowances``:
    this process's by default. The site's throttle and the bench's statements floor both call
    this, so both send Redis the same commands."""
    table = ALLOWANCES if allowances is None else allowances
    window = int(now // duration)
    end = float((window + 1) * duration)
    name = f"{counter}:{window}"
    taken = table.take(name, now)
    if taken is not None:
        return taken, end
    block = block_size(limit)
    total, _expiry = client.execute(("INCRBY", name, block), ("EXPIRE", name, duration + 1))
    if not isinstance(total, int):
        raise RedisWireError(f"INCRBY answered {total!r}")
    return table.add(name, end, total, block, limit), end


class UserRateThrottle(throttling.UserRateThrottle):
    """DRF's per-user limit (``API_THROTTLE_USER``), in fixed windows on Redis."""

    window_end: float | None = None
    duration: int  # set by DRF from the rate
    num_requests: int

    def allow_request(self, request: Request, view: APIView) -> bool:
        shared = cache_redis()
        if shared is None or self.rate is None:
            return super().allow_request(request, view)
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        client, prefix = shared
        self.now = self.timer()
        allowed, self.window_end = allow_call(
            client,
            f"{prefix}:throttle:{self.key}",
            limit=self.num_requests,
            duration=int(self.duration),
            now=self.now,
        )
        return allowed

    def wait(self) -> float | None:
        if self.window_end is None:
            return super().wait()
        return max(self.window_end - self.now, 0.0)
