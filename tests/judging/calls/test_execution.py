"""Tests for judging.calls.execution and the in-process rate limiter, against the fake endpoint."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from judging.calls.client import RetryPolicy
from judging.calls.execution import Call, EndpointSpec, JudgeRunner, Window
from judging.calls.ratelimit import LocalRateLimiter, RateLimit
from tests.support.fake_openai import FakeOpenAI


def spec(base_url: str, **kw: object) -> EndpointSpec:
    """The fake server's judge; its loopback address is allowed explicitly."""
    values: dict[str, object] = {
        "allowed_hosts": frozenset({urlsplit(base_url).netloc}),
        "key": "judge-x",
        "base_url": base_url,
        "api_key": "k",
        "model": "fake",
        "temperature": 0.0,
        "timeout_s": 2.0,
        "max_tokens": 64,
        "max_concurrency": 4,
        "requests_per_minute": None,
        "policy": RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.02),
    }
    values.update(kw)
    return EndpointSpec(**values)  # type: ignore[arg-type]


def calls(n: int) -> list[Call]:
    prompt = 'Reply with JSON only: {"answer_score": 0 or 1} item '
    return [Call(i, [{"role": "user", "content": f"{prompt}{i}"}]) for i in range(n)]


def max_overlap(server: FakeOpenAI) -> int:
    events = []
    for r in server.chat_records():
        events += [(r.received_at, 1), (r.responded_at or r.received_at, -1)]
    current = peak = 0
    for _t, delta in sorted(events):
        current += delta
        peak = max(peak, current)
    return peak


def test_calls_to_one_judge_never_exceed_its_concurrency() -> None:
    """Twenty slow calls with a cap of 4 overlap at most 4 at a time, and all succeed."""
    with FakeOpenAI(latency=0.05) as server:
        outcomes = JudgeRunner(None).run(spec(server.base_url), calls(20), "mmooc_scoring")
        assert all(o.ok for o in outcomes)
        assert 2 <= max_overlap(server) <= 4


def test_failures_are_retried_and_a_persistent_one_ends_as_an_error() -> None:
    """A 500 then a success gives a verdict in 2 attempts; four 500s give a final error."""
    with FakeOpenAI() as server:
        runner = JudgeRunner(None)
        server.queue_faults("error_500", "ok")
        (first,) = runner.run(spec(server.base_url), calls(1), "mmooc_scoring")
        server.queue_faults(*["error_500"] * 4)
        (second,) = runner.run(spec(server.base_url), calls(1), "mmooc_scoring")
    assert first.ok and first.attempts == 2
    assert not second.ok and second.error is not None and second.error.kind == "server_error"
    assert second.attempts == 4


def test_the_local_limiter_spaces_requests_at_the_configured_rate() -> None:
    """With 600 per minute and a burst of 2, the third request waits about 0.1 s."""
    now = [100.0]
    limiter = LocalRateLimiter({"j": RateLimit(600, burst=2)}, clock=lambda: now[0])

    async def run() -> list[float]:
        return [await limiter.try_acquire("j") for _ in range(3)]

    waits = asyncio.run(run())
    assert waits[:2] == [0.0, 0.0]
    assert abs(waits[2] - 0.1) < 1e-9
    now[0] += 0.1
    assert asyncio.run(limiter.try_acquire("j")) == 0.0


def test_a_hung_call_holds_only_its_own_slot_in_a_window() -> None:
    """With two slots and the first call hung until its timeout, the other nine calls all go
    through the second slot and end before it; the window never has more than two in flight."""
    with FakeOpenAI(latency=0.01) as server:
        server.queue_faults("hang")
        hung = spec(server.base_url, timeout_s=3.0, policy=RetryPolicy(max_attempts=1))
        window = Window(hung, iter(calls(10)), "mmooc_scoring", slots=2)
        order = [
            (key, outcome.ok)
            for batch in JudgeRunner(None).stream([window], step_s=0.05)
            for _index, key, outcome in batch
        ]
        assert max_overlap(server) <= 2
    assert order[-1] == (0, False)
    assert sorted(order[:-1]) == [(i, True) for i in range(1, 10)]


def test_windows_of_several_judges_run_side_by_side_and_a_closed_stream_stops() -> None:
    """Two judges' windows end every call once each; closing the stream early cancels the
    calls still under way and makes no more requests."""
    with FakeOpenAI(latency=0.01) as server:
        runner = JudgeRunner(None)
        windows = [
            Window(spec(server.base_url, key=f"judge-{j}"), iter(calls(6)), "mmooc_scoring", 2)
            for j in range(2)
        ]
        ended = [(i, key) for batch in runner.stream(windows) for i, key, _o in batch]
        assert sorted(ended) == [(j, k) for j in range(2) for k in range(6)]
        slow = FakeOpenAI(latency=0.5)
        with slow:
            stream = runner.stream(
                [Window(spec(slow.base_url), iter(calls(50)), "mmooc_scoring", 2)], step_s=0.05
            )
            next(stream, None)
            stream.close()
            assert len(slow.chat_records()) <= 4
            assert not asyncio.all_tasks(runner.loop)
