"""Per-judge request-rate limits shared by all workers through Redis, and a concurrency cap.

The limit is a GCRA (generic cell rate algorithm, an exact token bucket) run as one Lua
script, so concurrent workers on several hosts cannot both take the last slot, and it uses
Redis's clock, so skewed worker clocks do not matter.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis.asyncio import Redis

# Returns 0 when the request may go now (and books it), else the milliseconds to wait.
_GCRA_LUA = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local interval = tonumber(ARGV[1])
local tolerance = interval * (tonumber(ARGV[2]) - 1)
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then
    tat = now
end
if tat - now > tolerance then
    return tat - tolerance - now
end
local new_tat = tat + interval
redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil(new_tat - now + 1000))
return 0
"""


@dataclass(frozen=True)
class RateLimit:
    """`requests_per_minute` on average, with up to `burst` requests back to back."""

    requests_per_minute: float
    burst: int = 1

    def __post_init__(self) -> None:
        if self.requests_per_minute <= 0 or self.burst < 1:
            raise ValueError("requests_per_minute must be > 0 and burst >= 1")

    @property
    def interval_ms(self) -> int:
        """Milliseconds between requests at the steady rate."""
        return max(1, round(60_000 / self.requests_per_minute))


class RateLimitTimeout(TimeoutError):
    """acquire() would have waited longer than its timeout."""


class _Limiter:
    """What both limiters share: the limits, and waiting for a slot with ``try_acquire``."""

    def __init__(
        self,
        limits: Mapping[str, RateLimit],
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self._limits = dict(limits)
        self._clock = clock
        self._sleep = sleep

    def limit_for(self, judge_key: str) -> RateLimit | None:
        """The configured limit of a judge, if any."""
        return self._limits.get(judge_key)

    async def try_acquire(self, judge_key: str) -> float:
        """Take a slot now and return 0, or return the seconds until one is free."""
        raise NotImplementedError

    async def acquire(self, judge_key: str, *, timeout: float | None = None) -> float:
        """Wait until the judge may be called; return the seconds waited."""
        started = self._clock()
        while True:
            wait = await self.try_acquire(judge_key)
            if wait <= 0:
                return self._clock() - started
            if timeout is not None and self._clock() - started + wait > timeout:
                raise RateLimitTimeout(f"rate limit for {judge_key!r} not free within {timeout}s")
            # Another worker may take the slot first; the loop then simply waits again.
            await self._sleep(wait)


class RedisRateLimiter(_Limiter):
    """Shared per-judge limiter; judges without a configured limit are not limited."""

    def __init__(
        self,
        redis: Redis,
        limits: Mapping[str, RateLimit],
        *,
        prefix: str = "judging:ratelimit:",
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        super().__init__(limits, sleep=sleep)
        self._redis = redis
        self._prefix = prefix
        self._script = redis.register_script(_GCRA_LUA)

    async def try_acquire(self, judge_key: str) -> float:
        """Take a slot now and return 0, or return the seconds until one is free."""
        limit = self._limits.get(judge_key)
        if limit is None:
            return 0.0
        wait_ms = await self._script(
            keys=[self._prefix + judge_key], args=[limit.interval_ms, limit.burst]
        )
        return int(wait_ms) / 1000

    async def reset(self, judge_key: str) -> None:
        """Forget a judge's history (tests, or after changing its limit)."""
        await self._redis.delete(self._prefix + judge_key)


class ConcurrencyCaps:
    """At most `limit` in-flight calls per judge within this process."""

    def __init__(self, limits: Mapping[str, int], *, default: int = 8) -> None:
        self._limits = dict(limits)
        self._default = default
        self._semaphores: dict[str, asyncio.Semaphore] = {}

    def _semaphore(self, judge_key: str) -> asyncio.Semaphore:
        if judge_key not in self._semaphores:
            size = self._limits.get(judge_key, self._default)
            self._semaphores[judge_key] = asyncio.Semaphore(size)
        return self._semaphores[judge_key]

    @asynccontextmanager
    async def slot(self, judge_key: str) -> AsyncIterator[None]:
        """Hold one of the judge's slots for the duration of the block."""
        async with self._semaphore(judge_key):
            yield


# Takes one of `limit` slots for `token` until its lease ends; 1 when taken, else 0. Members
# are scored by lease expiry, so the slots of a worker that died come back by themselves.
_SEMAPHORE_LUA = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
    return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
"""


class RedisSemaphore:
    """At most `limit` in-flight calls per judge across every worker process and host.

    ConcurrencyCaps bounds one process; this bounds them all, so running more worker
    processes never sends a judge more concurrent requests than its configured cap. A holder
    polls with a short, growing back-off while the judge is full; each slot is a lease, so a
    killed worker's slots are freed when the lease ends.
    """

    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str = "judging:inflight:",
        lease_s: float = 300.0,
        poll_s: tuple[float, float] = (0.002, 0.02),
    ) -> None:
        self._redis = redis
        self._prefix = prefix
        self._lease_ms = int(lease_s * 1000)
        self._poll = poll_s
        self._script = redis.register_script(_SEMAPHORE_LUA)

    async def try_acquire(
        self, judge_key: str, limit: int, token: str, *, lease_s: float | None = None
    ) -> bool:
        lease_ms = self._lease_ms if lease_s is None else int(lease_s * 1000)
        keys = [self._prefix + judge_key]
        return bool(await self._script(keys=keys, args=[limit, lease_ms, token]))

    async def release(self, judge_key: str, token: str) -> None:
        await self._redis.zrem(self._prefix + judge_key, token)

    async def holders(self, judge_key: str) -> int:
        return int(await self._redis.zcard(self._prefix + judge_key))

    @asynccontextmanager
    async def slot(
        self, judge_key: str, limit: int, *, lease_s: float | None = None
    ) -> AsyncIterator[None]:
        """Hold one of the judge's `limit` slots, shared by all workers, for the block."""
        token = uuid.uuid4().hex
        delay = self._poll[0]
        while not await self.try_acquire(judge_key, limit, token, lease_s=lease_s):
            await asyncio.sleep(delay * (0.5 + random.random()))  # noqa: S311 - jitter
            delay = min(delay * 2, self._poll[1])
        try:
            yield
        finally:
            await self.release(judge_key, token)


class LocalRateLimiter(_Limiter):
    """The same GCRA as RedisRateLimiter, held in this process only.

    The fallback when no Redis is configured (the local demo run): each worker process then
    keeps its own budget, so several processes together can exceed a judge's limit.
    """

    @functools.cached_property
    def _tat(self) -> dict[str, float]:
        """Each judge's theoretical arrival time (the base class's constructor serves)."""
        return {}

    def set_limit(self, judge_key: str, limit: RateLimit | None) -> None:
        """Change (or remove) a judge's limit."""
        if limit is None:
            self._limits.pop(judge_key, None)
        else:
            self._limits[judge_key] = limit

    async def try_acquire(self, judge_key: str) -> float:
        """Take a slot now and return 0, or return the seconds until one is free."""
        limit = self._limits.get(judge_key)
        if limit is None:
            return 0.0
        now = self._clock()
        interval = limit.interval_ms / 1000
        tolerance = interval * (limit.burst - 1)
        tat = max(self._tat.get(judge_key, now), now)
        if tat - now > tolerance:
            return tat - tolerance - now
        self._tat[judge_key] = tat + interval
        return 0.0
