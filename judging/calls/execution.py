"""The worker side of a judge job: many chat-completions calls to judges, concurrently.

Django-free. A process keeps one event loop, its HTTP clients (connections are reused from
chunk to chunk), its per-judge concurrency caps and its rate limiter; a chunk hands over the
calls and gets one outcome per call back (``run``), or a lane hands over every judge's calls
and gets outcomes back in batches as they end (``stream``): each judge's slots stay busy,
a call starting as soon as another ends, so a hung call holds only its own slot.
"""

from __future__ import annotations

import asyncio
import functools
import os
import queue
import random
import threading
from collections.abc import Awaitable, Callable, Generator, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judging.calls.client import (
    CallResult,
    JudgeOutcome,
    RetryPolicy,
    call_judge_lean,
    judge_with_retries,
    make_client,
)
from judging.calls.ratelimit import (
    ConcurrencyCaps,
    LocalRateLimiter,
    RateLimit,
    RedisRateLimiter,
    RedisSemaphore,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI


@dataclass(frozen=True)
class EndpointSpec:
    """How to call one judge: its endpoint, sampling settings, limits and retry policy."""

    key: str
    base_url: str
    api_key: str
    model: str
    temperature: float
    timeout_s: float
    max_tokens: int
    max_concurrency: int
    requests_per_minute: int | None
    policy: RetryPolicy
    # host:port entries that may be called although they are not public (JUDGE_ALLOWED_HOSTS).
    allowed_hosts: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Call:
    """One request: `key` identifies the item (and repeat) it is for."""

    key: Hashable
    messages: list[dict[str, Any]]


@dataclass(frozen=True)
class Window:
    """One judge's calls in a lane: at most `slots` HTTP requests in flight in this process
    (the judge's cap across processes is held in Redis), the next call starting as soon as a
    request ends. Calls are taken from the iterable only when they can start."""

    spec: EndpointSpec
    calls: Iterable[Call]
    task: str
    slots: int


# (index of the window in the lane, call key, outcome)
Ended = tuple[int, Hashable, JudgeOutcome]


class JudgeRunner:
    """Runs calls for judges in this process; one instance per process (see `for_process`)."""

    _instance: JudgeRunner | None = None

    def __init__(self, redis_url: str | None) -> None:
        self.redis_url = redis_url or None
        self.loop = asyncio.new_event_loop()
        self._clients: dict[tuple[str, str, str, float, frozenset[str]], AsyncOpenAI] = {}
        self._caps: dict[tuple[str, int], ConcurrencyCaps] = {}
        self._local = LocalRateLimiter({})
        self._redis: Any = None
        self._semaphore: RedisSemaphore | None = None
        self._pid = os.getpid()

    @property
    def rate_limit_scope(self) -> str:
        """ "redis" when limits hold across every worker, "process" when only within this one."""
        return "redis" if self.redis_url else "process"

    @classmethod
    def for_process(cls, redis_url: str | None) -> JudgeRunner:
        """The runner of this process, made afresh after a fork (loops do not survive one)."""
        current = cls._instance
        if (
            current is None
            or current._pid != os.getpid()
            or current.redis_url != (redis_url or None)
        ):
            current = cls._instance = cls(redis_url)
        return current

    def _client(self, spec: EndpointSpec) -> AsyncOpenAI:
        key = (spec.key, spec.base_url, spec.api_key, spec.timeout_s, spec.allowed_hosts)
        if key not in self._clients:
            self._clients[key] = make_client(
                spec.base_url,
                spec.api_key,
                timeout_s=spec.timeout_s,
                allowed_hosts=spec.allowed_hosts,
            )
        return self._clients[key]

    def _cap(self, spec: EndpointSpec) -> ConcurrencyCaps:
        key = (spec.key, spec.max_concurrency)
        if key not in self._caps:
            self._caps[key] = ConcurrencyCaps({spec.key: spec.max_concurrency})
        return self._caps[key]

    def _redis_client(self) -> Any:
        if self._redis is None:
            from redis.asyncio import Redis

            self._redis = Redis.from_url(str(self.redis_url))
        return self._redis

    def _shared_cap(self, spec: EndpointSpec) -> RedisSemaphore | None:
        """The cap across all worker processes (None without Redis: one worker then)."""
        if not self.redis_url:
            return None
        if self._semaphore is None:
            self._semaphore = RedisSemaphore(self._redis_client())
        return self._semaphore

    def _limiter(self, spec: EndpointSpec) -> RedisRateLimiter | LocalRateLimiter | None:
        if not spec.requests_per_minute:
            return None
        # A burst of the concurrency cap lets a fresh job start at full speed.
        limit = RateLimit(spec.requests_per_minute, burst=max(1, spec.max_concurrency))
        if self.redis_url:
            return RedisRateLimiter(self._redis_client(), {spec.key: limit})
        self._local.set_limit(spec.key, limit)
        return self._local

    def stream(
        self, windows: Sequence[Window], *, step_s: float = 0.25, idle: bool = False
    ) -> Generator[list[Ended], None, None]:
        """Run every window's calls; yield the outcomes that ended, every `step_s` seconds
        (with `idle`, an empty batch too when none ended, so that the caller can notice a
        cancel while every call hangs).

        The calls run on this runner's event loop in a thread of their own, so they go on
        while the caller handles a batch (its database writes stay in the caller's thread);
        closing the generator early cancels the calls still under way.
        """
        ended: queue.SimpleQueue[Ended] = queue.SimpleQueue()
        main = self.loop.create_task(self._windows(windows, ended))
        failure: list[BaseException] = []

        def drive() -> None:
            try:
                self.loop.run_until_complete(main)
            except BaseException as exc:  # raised again in the caller's thread
                failure.append(exc)

        def drain() -> list[Ended]:
            batch = []
            while True:
                try:
                    batch.append(ended.get_nowait())
                except queue.Empty:
                    return batch

        thread = threading.Thread(target=drive, name="judge-calls", daemon=True)
        thread.start()
        try:
            while thread.is_alive():
                thread.join(step_s)
                if (batch := drain()) or idle:
                    yield batch
            if batch := drain():
                yield batch
            if failure:
                raise failure[0]
        finally:
            if thread.is_alive():
                self.loop.call_soon_threadsafe(main.cancel)
                thread.join()

    async def _windows(self, windows: Sequence[Window], ended: queue.SimpleQueue[Ended]) -> None:
        await asyncio.gather(*(self._window(i, w, ended) for i, w in enumerate(windows)))

    def _judge(
        self, spec: EndpointSpec, call: Callable[..., Awaitable[CallResult]]
    ) -> Callable[[list[dict[str, Any]], str], Awaitable[JudgeOutcome]]:
        """judge_with_retries(messages, task) for one endpoint: its settings, its rate
        limiter (awaited before every attempt), its own backoff jitter, `call` per attempt."""
        limiter = self._limiter(spec)

        async def before_attempt() -> None:
            if limiter is not None:
                await limiter.acquire(spec.key)

        return functools.partial(
            judge_with_retries,
            self._client(spec),
            spec.model,
            policy=spec.policy,
            temperature=spec.temperature,
            timeout=spec.timeout_s,
            max_tokens=spec.max_tokens,
            before_attempt=before_attempt,
            rng=random.Random(),  # noqa: S311 - backoff jitter
            call=call,
        )

    async def _window(self, index: int, window: Window, ended: queue.SimpleQueue[Ended]) -> None:
        spec = window.spec
        shared = self._shared_cap(spec)
        requests = asyncio.Semaphore(max(1, window.slots))
        # Calls under way, some waiting out a backoff without holding a request slot.
        under_way = asyncio.Semaphore(2 * max(1, window.slots))
        shared_key = f"{spec.key}@{spec.base_url}"

        async def attempt(*args: Any, **kwargs: Any) -> CallResult:
            async with requests:
                if shared is None:
                    return await call_judge_lean(*args, **kwargs)
                lease_s = spec.timeout_s + 10
                async with shared.slot(shared_key, spec.max_concurrency, lease_s=lease_s):
                    return await call_judge_lean(*args, **kwargs)

        judge = self._judge(spec, attempt)

        async def one(call: Call) -> None:
            try:
                outcome = await judge(call.messages, window.task)
                ended.put((index, call.key, outcome))
            finally:
                under_way.release()

        tasks: list[asyncio.Task[None]] = []
        try:
            for call in window.calls:
                await under_way.acquire()
                for ended_task in [t for t in tasks if t.done()]:
                    ended_task.result()  # a call that raised ends the lane with its error
                tasks = [t for t in tasks if not t.done()]
                tasks.append(asyncio.create_task(one(call)))
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def run(self, spec: EndpointSpec, calls: Sequence[Call], task: str) -> list[JudgeOutcome]:
        """Make every call (retrying as the policy says); outcomes in the order of `calls`."""
        return self.loop.run_until_complete(self._run(spec, calls, task))

    async def _run(
        self, spec: EndpointSpec, calls: Sequence[Call], task: str
    ) -> list[JudgeOutcome]:
        caps = self._cap(spec)
        shared = self._shared_cap(spec)

        async def shared_call(*args: Any, **kwargs: Any) -> CallResult:
            # The cross-process slot is held for one HTTP attempt only (never across backoff),
            # so its lease can be short and a killed worker's slots return within seconds.
            assert shared is not None
            key = f"{spec.key}@{spec.base_url}"
            async with shared.slot(key, spec.max_concurrency, lease_s=spec.timeout_s + 10):
                return await call_judge_lean(*args, **kwargs)

        judge = self._judge(spec, call_judge_lean if shared is None else shared_call)

        async def one(call: Call) -> JudgeOutcome:
            async with caps.slot(spec.key):
                return await judge(call.messages, task)

        return list(await asyncio.gather(*(one(call) for call in calls)))
