"""The API's per-user rate limit, counted on Redis in one round trip.

DRF's ``UserRateThrottle`` keeps every request's time of the last period in the cache: a get
and a set per request, the list unpickled, trimmed and pickled again. On the review loop that
was the largest cost after the submission itself. With the cache on Redis, this counts the
requests of each fixed window of the period instead: one ``INCR`` per request (the window's
first also sets the counter's ``EXPIRE``; a counter whose process died between the two is
never read again, its key naming a past window); a caller may then send up to twice the rate
across a window's edge, never more.
Without Redis (the local demo, tests without it), DRF's own throttle runs.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import redis
from django.conf import settings
from rest_framework import throttling

if TYPE_CHECKING:  # DRF imports this module while it builds its views: no runtime import
    from rest_framework.request import Request
    from rest_framework.views import APIView

_REDIS_CACHE = "django.core.cache.backends.redis.RedisCache"


@cache
def _client(location: str) -> Any:
    return redis.Redis.from_url(location)


def _redis() -> tuple[Any, str] | None:
    """The cache's Redis client and key prefix, or None when the cache is not Redis."""
    default = settings.CACHES["default"]
    if default["BACKEND"] != _REDIS_CACHE:
        return None
    return _client(default["LOCATION"]), default.get("KEY_PREFIX", "")


class UserRateThrottle(throttling.UserRateThrottle):
    """DRF's per-user limit (``API_THROTTLE_USER``), in fixed windows on Redis."""

    window_end: float | None = None
    duration: int  # set by DRF from the rate
    num_requests: int

    def allow_request(self, request: Request, view: APIView) -> bool:
        shared = _redis()
        if shared is None or self.rate is None:
            return super().allow_request(request, view)
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        client, prefix = shared
        self.now = self.timer()
        window = int(self.now // self.duration)
        key = f"{prefix}:throttle:{self.key}:{window}"
        count = client.incr(key)
        if count == 1:  # the window's first call: the counter goes with the window
            client.expire(key, int(self.duration) + 1)
        self.window_end = (window + 1) * self.duration
        return bool(count <= self.num_requests)

    def wait(self) -> float | None:
        if self.window_end is None:
            return super().wait()
        return max(self.window_end - self.now, 0.0)
