"""Tests for judging.calls.client: the real openai SDK against the local fake server."""

from __future__ import annotations

import asyncio
import base64
import email.utils
import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import openai
import pytest

from judging.calls.client import (
    JudgeOutcome,
    RetryPolicy,
    build_messages,
    classify_error,
    judge_with_retries,
    make_client,
    parse_retry_after,
)
from judging.calls.output import MalformedOutput, ScoringOutput
from judging.prompts import MMOOC_SCORING_V1
from tests.support.fake_openai import FakeOpenAI

FIELDS = {
    "question": "Is the car blue?",
    "reference_answer": "yes",
    "reference_reasoning": "The car body is blue.",
    "response": "Yes, it is blue.",
}
FAST = RetryPolicy(max_attempts=4, max_malformed=3, base_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(latency=0.0, seed=1) as fake:
        yield fake


def judge(
    server: FakeOpenAI,
    *,
    messages: list[dict[str, Any]] | None = None,
    policy: RetryPolicy = FAST,
    timeout: float = 5.0,
) -> JudgeOutcome:
    async def run() -> JudgeOutcome:
        client = make_client(server.base_url, timeout_s=timeout, allowed_hosts=server.allowed)
        try:
            return await judge_with_retries(
                client,
                "judge-model",
                messages or build_messages(MMOOC_SCORING_V1, FIELDS),
                "mmooc_scoring",
                policy=policy,
                timeout=timeout,
            )
        finally:
            await client.close()

    return asyncio.run(run())


def test_success_returns_a_verdict_and_requests_json(server: FakeOpenAI) -> None:
    """One clean call gives a parsed verdict, token counts and asks for a JSON object."""
    outcome = judge(server)
    assert outcome.ok
    assert outcome.attempts == 1
    assert isinstance(outcome.verdict, ScoringOutput)
    assert outcome.call is not None
    assert outcome.call.prompt_tokens and outcome.call.completion_tokens
    (record,) = server.chat_records()
    assert record.body is not None
    assert record.body["response_format"] == {"type": "json_object"}
    assert record.body["model"] == "judge-model"
    assert record.body["temperature"] == 0.0


def test_json_in_fences_is_accepted() -> None:
    """A judge that wraps its JSON in ```json fences still yields a verdict first time."""

    def fenced(request: dict[str, Any], digest: str) -> str:
        return 'Verdict:\n```json\n{"answer_score": 1, "reasoning_score": 1, "reason": "ok"}\n```'

    with FakeOpenAI(responder=fenced) as fake:
        outcome = judge(fake)
    assert outcome.verdict == ScoringOutput(1, 1.0, "ok")
    assert outcome.attempts == 1


def test_500_then_success_is_retried(server: FakeOpenAI) -> None:
    """A 500 is retried; the second attempt's verdict is returned, exactly one success."""
    server.queue_faults("error_500")
    outcome = judge(server)
    assert outcome.ok
    assert outcome.attempts == 2
    assert [error.kind for error in outcome.errors] == ["server_error"]
    assert set(server.success_counts().values()) == {1}


def test_429_waits_at_least_retry_after(server: FakeOpenAI) -> None:
    """A 429 is retried no sooner than its Retry-After, whatever the backoff would say."""
    server.queue_faults("rate_limit:1")
    outcome = judge(server)
    assert outcome.ok
    assert outcome.attempts == 2
    assert outcome.errors[0].retry_after_s == 1.0
    first, second = server.chat_records()
    assert first.status == 429
    assert first.responded_at is not None
    assert second.received_at - first.responded_at >= 1.0


def test_hang_times_out_and_is_retried(server: FakeOpenAI) -> None:
    """A reply that never comes hits the client timeout and the next attempt succeeds."""
    server.queue_faults("hang:10")
    started = time.monotonic()
    outcome = judge(server, timeout=0.3)
    assert outcome.ok
    assert outcome.attempts == 2
    assert outcome.errors[0].kind == "timeout"
    assert time.monotonic() - started < 5


def test_malformed_output_is_retried_then_final(server: FakeOpenAI) -> None:
    """Non-JSON verdicts are retried up to max_malformed, then reported as a final error."""
    server.queue_faults("malformed", "malformed", "malformed", "ok")
    outcome = judge(server)
    assert not outcome.ok
    assert outcome.attempts == 3
    assert outcome.error is not None and outcome.error.kind == "malformed"
    assert "no JSON object" in outcome.error.message
    assert len(server.chat_records()) == 3


@pytest.mark.parametrize("fault", ["malformed", "invalid_body"])
def test_a_malformed_verdict_or_a_body_that_is_not_json_is_retried(
    server: FakeOpenAI, fault: str
) -> None:
    """One malformed verdict, or a 200 whose body is not JSON, followed by a valid answer
    succeeds on the second attempt."""
    server.queue_faults(fault)
    outcome = judge(server)
    assert outcome.ok
    assert outcome.attempts == 2


def test_truncated_body_is_a_retryable_connection_error(server: FakeOpenAI) -> None:
    """A body cut short of its Content-Length is retried as a connection failure."""
    server.queue_faults("truncated")
    outcome = judge(server)
    assert outcome.ok
    assert outcome.attempts == 2
    assert outcome.errors[0].kind == "connection"


def test_400_is_final_without_retry(server: FakeOpenAI) -> None:
    """A 400 is final: one request, no retry, the error kept for the record."""
    server.queue_faults("bad_request")
    outcome = judge(server)
    assert not outcome.ok
    assert outcome.attempts == 1
    assert outcome.error is not None
    assert (outcome.error.kind, outcome.error.retryable) == ("client_error", False)
    assert len(server.chat_records()) == 1


def test_attempts_are_capped(server: FakeOpenAI) -> None:
    """Persistent 500s stop after max_attempts with the last error."""
    server.queue_faults(*["error_500"] * 10)
    outcome = judge(server, policy=RetryPolicy(max_attempts=3, base_delay_s=0.01))
    assert not outcome.ok
    assert outcome.attempts == 3
    assert len(server.chat_records()) == 3


def test_image_and_audio_parts_reach_the_server(server: FakeOpenAI) -> None:
    """Images go as base64 data URLs (or URLs) in image_url parts, audio as input_audio."""
    messages = build_messages(
        MMOOC_SCORING_V1,
        FIELDS,
        images=[(b"\x89PNG fake", "image/png"), "https://example.org/a.jpg"],
        audio=[(b"RIFF fake", "wav")],
    )
    assert judge(server, messages=messages).ok
    (record,) = server.chat_records()
    assert record.body is not None
    parts = record.body["messages"][1]["content"]
    assert [part["type"] for part in parts] == ["text", "image_url", "image_url", "input_audio"]
    encoded = base64.b64encode(b"\x89PNG fake").decode()
    assert parts[1]["image_url"]["url"] == f"data:image/png;base64,{encoded}"
    assert parts[2]["image_url"]["url"] == "https://example.org/a.jpg"
    assert parts[3]["input_audio"] == {
        "data": base64.b64encode(b"RIFF fake").decode(),
        "format": "wav",
    }


def test_text_only_judges_get_descriptions_not_media() -> None:
    """A text-only judge gets one text message with the descriptions, and no media parts."""
    fields = {**FIELDS, "image_description": "A blue car on a street."}
    messages = build_messages(
        MMOOC_SCORING_V1, fields, images=[(b"x", "image/png")], text_only=True
    )
    assert isinstance(messages[1]["content"], str)
    assert "Image description: A blue car on a street." in messages[1]["content"]


def test_before_attempt_runs_before_every_attempt(server: FakeOpenAI) -> None:
    """The rate-limit hook is awaited once per attempt, retries included."""
    server.queue_faults("error_500", "error_500")
    calls: list[int] = []

    async def run() -> JudgeOutcome:
        client = make_client(server.base_url, allowed_hosts=server.allowed)

        async def hook() -> None:
            calls.append(len(server.chat_records()))

        outcome = await judge_with_retries(
            client,
            "m",
            build_messages(MMOOC_SCORING_V1, FIELDS),
            "mmooc_scoring",
            policy=FAST,
            before_attempt=hook,
        )
        await client.close()
        return outcome

    outcome = asyncio.run(run())
    assert outcome.attempts == 3
    assert calls == [0, 1, 2]


def _status_error(cls: type[openai.APIStatusError], status: int) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://judge/v1/chat/completions")
    return cls("boom", response=httpx2.Response(status, request=request), body=None)


def test_classify_error_final_and_retryable() -> None:
    """Auth and other 4xx are final; 5xx, 408, timeouts, connection and malformed retry.

    The SDK is built on httpx2 (its fork of httpx), so its errors carry httpx2 objects.
    """
    request = httpx2.Request("POST", "http://judge/v1/chat/completions")
    assert not classify_error(_status_error(openai.AuthenticationError, 401)).retryable
    assert not classify_error(_status_error(openai.PermissionDeniedError, 403)).retryable
    assert not classify_error(_status_error(openai.NotFoundError, 404)).retryable
    assert classify_error(_status_error(openai.InternalServerError, 503)).retryable
    assert classify_error(_status_error(openai.APIStatusError, 408)).retryable
    assert classify_error(openai.APITimeoutError(request=request)).kind == "timeout"
    assert classify_error(openai.APIConnectionError(request=request)).kind == "connection"
    assert classify_error(MalformedOutput("bad")).kind == "malformed"
    assert not classify_error(RuntimeError("bug")).retryable


def test_parse_retry_after_forms() -> None:
    """Retry-After as seconds or an HTTP date, and retry-after-ms, are all understood."""
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    future = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30))
    parsed = parse_retry_after({"retry-after": future})
    assert parsed is not None and 25 <= parsed <= 31
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None


def test_backoff_is_exponential_capped_and_jittered() -> None:
    """Delays double per attempt, stay within [ceiling/2, ceiling] and never pass the cap."""
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(3)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        delays = [policy.backoff(attempt, rng) for _ in range(50)]
        assert all(ceiling / 2 <= delay <= ceiling for delay in delays)
        assert len(set(delays)) > 1
