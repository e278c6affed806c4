"""The API's per-user rate limit, counted on Redis in one round trip.

DRF's ``UserRateThrottle`` keeps every request's time of the last period in the cache: a get
and a set per request, the list unpickled, trimmed and pickled again. On the review loop that
was the largest cost after the submission itself. With the cache on Redis, this counts the
requests of each fixed window of the period instead (``INCR`` and ``EXPIRE`` pipelined: one
round trip, through core.redis_wire rather than redis-py); a caller may then send up to twice
the rate across a window's edge, never more. Without Redis (the local demo, tests without it),
DRF's own throttle runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import throttling

from core.redis_wire import RedisWireError, cache_redis

if TYPE_CHECKING:  # DRF imports this module while it builds its views: no runtime import
    from rest_framework.request import Request
    from rest_framework.views import APIView


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
        window = int(self.now // self.duration)
        key = f"{prefix}:throttle:{self.key}:{window}"
        count, _expiry = client.execute(("INCR", key), ("EXPIRE", key, int(self.duration) + 1))
        if not isinstance(count, int):
            raise RedisWireError(f"INCR answered {count!r}")
        self.window_end = (window + 1) * self.duration
        return bool(count <= self.num_requests)

    def wait(self) -> float | None:
        if self.window_end is None:
            return super().wait()
        return max(self.window_end - self.now, 0.0)
