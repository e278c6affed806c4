"""Tests for judging.calls.ratelimit against a real Redis (127.0.0.1:6379, db 15)."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Iterator

import pytest
import redis
from redis.asyncio import Redis as AsyncRedis

from judging.calls.ratelimit import (
    ConcurrencyCaps,
    RateLimit,
    RateLimitTimeout,
    RedisRateLimiter,
)

REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture
def prefix() -> Iterator[str]:
    """A key prefix private to the test; Redis must be up (in CI a missing Redis fails)."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as error:
        if os.environ.get("CI"):
            pytest.fail(f"Redis at {REDIS_URL} is required in CI: {error}")
        pytest.skip(f"Redis at {REDIS_URL} is not reachable (set CI=1 to make this fail)")
    key_prefix = f"test:ratelimit:{uuid.uuid4().hex}:"
    yield key_prefix
    for key in client.scan_iter(f"{key_prefix}*"):
        client.delete(key)
    client.close()


def test_burst_is_granted_then_the_next_request_waits(prefix: str) -> None:
    """Up to `burst` requests go at once; the next is told to wait about one interval."""

    async def run() -> list[float]:
        client = AsyncRedis.from_url(REDIS_URL)
        limiter = RedisRateLimiter(client, {"gpt": RateLimit(60, burst=3)}, prefix=prefix)
        waits = [await limiter.try_acquire("gpt") for _ in range(4)]
        await client.aclose()
        return waits

    waits = asyncio.run(run())
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert 0.9 <= waits[3] <= 1.0


def test_concurrent_workers_never_exceed_the_burst(prefix: str) -> None:
    """Fifty simultaneous callers on separate connections: exactly `burst` are let through."""

    async def run() -> list[float]:
        clients = [AsyncRedis.from_url(REDIS_URL) for _ in range(5)]
        limiters = [
            RedisRateLimiter(client, {"o1": RateLimit(60, burst=5)}, prefix=prefix)
            for client in clients
        ]
        waits = await asyncio.gather(*(limiters[i % 5].try_acquire("o1") for i in range(50)))
        for client in clients:
            await client.aclose()
        return list(waits)

    waits = asyncio.run(run())
    assert sum(1 for wait in waits if wait == 0) == 5


def test_acquire_spaces_requests_across_workers(prefix: str) -> None:
    """Shared by four workers, 6,000 rpm (10 ms apart) spaces 40 grants over >= 390 ms."""
    grants: list[float] = []

    async def worker(limiter: RedisRateLimiter, count: int) -> None:
        for _ in range(count):
            await limiter.acquire("vllm")
            grants.append(time.monotonic())

    async def run() -> None:
        clients = [AsyncRedis.from_url(REDIS_URL) for _ in range(4)]
        limiters = [
            RedisRateLimiter(client, {"vllm": RateLimit(6000)}, prefix=prefix) for client in clients
        ]
        await asyncio.gather(*(worker(limiter, 10) for limiter in limiters))
        for client in clients:
            await client.aclose()

    asyncio.run(run())
    grants.sort()
    assert len(grants) == 40
    # Redis's clock books the slots; local timestamps can only be later, never earlier.
    assert grants[-1] - grants[0] >= 0.39 * 0.95


def test_acquire_gives_up_after_its_timeout(prefix: str) -> None:
    """acquire(timeout=...) raises instead of waiting past its deadline."""

    async def run() -> None:
        client = AsyncRedis.from_url(REDIS_URL)
        limiter = RedisRateLimiter(client, {"slow": RateLimit(1)}, prefix=prefix)
        try:
            assert await limiter.acquire("slow") < 0.5
            with pytest.raises(RateLimitTimeout):
                await limiter.acquire("slow", timeout=0.5)
        finally:
            await client.aclose()

    asyncio.run(run())


def test_unlimited_judges_do_not_touch_redis(prefix: str) -> None:
    """A judge with no configured limit is granted at once and leaves no key behind."""

    async def run() -> float:
        client = AsyncRedis.from_url(REDIS_URL)
        limiter = RedisRateLimiter(client, {}, prefix=prefix)
        waited = await limiter.acquire("free")
        keys = [key async for key in client.scan_iter(f"{prefix}*")]
        await client.aclose()
        assert keys == []
        return waited

    assert asyncio.run(run()) < 0.05


def test_rate_limit_validates_its_values() -> None:
    """Zero or negative rates and empty bursts are rejected."""
    with pytest.raises(ValueError):
        RateLimit(0)
    with pytest.raises(ValueError):
        RateLimit(60, burst=0)
    assert RateLimit(600).interval_ms == 100


def test_concurrency_cap_holds_at_most_limit_in_flight() -> None:
    """With a cap of 3, ten tasks never have more than 3 inside the slot at once."""

    async def run() -> int:
        caps = ConcurrencyCaps({"gpt": 3})
        gate = asyncio.Event()
        inside = 0
        peak = 0

        async def task() -> None:
            nonlocal inside, peak
            async with caps.slot("gpt"):
                inside += 1
                peak = max(peak, inside)
                await gate.wait()
                inside -= 1

        tasks = [asyncio.create_task(task()) for _ in range(10)]
        while inside < 3:
            await asyncio.sleep(0)
        # Let every other task try to enter before opening the gate.
        for _ in range(20):
            await asyncio.sleep(0)
        assert inside == 3
        gate.set()
        await asyncio.gather(*tasks)
        return peak

    assert asyncio.run(run()) == 3


def test_the_shared_cap_holds_across_workers(prefix: str) -> None:
    """Five workers, each allowed 4 calls at once, never hold more than the judge's 4 in all."""
    from judging.calls.ratelimit import RedisSemaphore

    async def scenario() -> tuple[int, int]:
        clients = [AsyncRedis.from_url(REDIS_URL) for _ in range(5)]
        caps = [RedisSemaphore(client, prefix=prefix) for client in clients]
        in_flight, peak, done = 0, 0, 0

        async def call(cap: RedisSemaphore) -> None:
            nonlocal in_flight, peak, done
            async with cap.slot("judge", 4, lease_s=10):
                in_flight += 1
                peak = max(peak, in_flight)
                await asyncio.sleep(0.01)
                in_flight -= 1
                done += 1

        await asyncio.gather(*(call(cap) for cap in caps for _ in range(8)))
        for client in clients:
            await client.aclose()
        return peak, done

    peak, done = asyncio.run(scenario())
    assert done == 40 and peak == 4


def test_a_dead_workers_slots_come_back_when_their_lease_ends(prefix: str) -> None:
    """Slots taken by a worker that never released them free themselves after the lease."""
    from judging.calls.ratelimit import RedisSemaphore

    async def scenario() -> tuple[bool, bool, int]:
        client = AsyncRedis.from_url(REDIS_URL)
        cap = RedisSemaphore(client, prefix=prefix)
        for token in ("dead-1", "dead-2"):
            assert await cap.try_acquire("judge", 2, token, lease_s=0.2)
        blocked = await cap.try_acquire("judge", 2, "alive", lease_s=5)
        await asyncio.sleep(0.3)
        freed = await cap.try_acquire("judge", 2, "alive", lease_s=5)
        holders = await cap.holders("judge")
        await client.aclose()
        return blocked, freed, holders

    blocked, freed, holders = asyncio.run(scenario())
    assert (blocked, freed, holders) == (False, True, 1)
