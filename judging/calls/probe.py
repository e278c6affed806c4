"""One small call to a judge's endpoint, to tell whether it can answer and how fast.

Django-free. A probe asks for a tiny scoring verdict, once, without retries, and reports the
latency and the parsed reply, or the exact reason it failed, by kind: the address the egress
rules refuse, an endpoint that cannot be reached or does not answer in time, an HTTP error
(with an unknown model or a refused key told apart), or a reply that is not a verdict.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from core.egress import EndpointRefused
from judging.calls.client import classify_error, make_client
from judging.calls.output import MalformedOutput, parse_judge_output

if TYPE_CHECKING:
    from openai import AsyncOpenAI

# A reply is a verdict when it parses as the output of any task (a scoring reply asked for).
PROBE_TASKS = ("mmooc_scoring", "answerability", "mcbench_safety")
PROBE_MAX_TOKENS = 100
PROBE_MESSAGES = [
    {
        "role": "system",
        "content": "You check that a judge endpoint works. Reply with one JSON object only.",
    },
    {
        "role": "user",
        "content": 'Reply exactly with {"answer_score": 1, "reasoning_score": 1, '
        '"reason": "ready"}',
    },
]


class ProbeError:
    KEY_MISSING = "key_missing"
    REFUSED = "refused"
    UNREACHABLE = "unreachable"
    TIMEOUT = "timeout"
    UNKNOWN_MODEL = "unknown_model"
    AUTH = "auth"
    HTTP_ERROR = "http_error"
    MALFORMED = "malformed"
    UNEXPECTED = "unexpected"


@dataclass(frozen=True)
class ProbeTarget:
    base_url: str
    api_key: str
    model: str
    timeout_s: float
    temperature: float = 0.0
    allowed_hosts: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    latency_s: float | None = None
    reply: str = ""  # the parsed verdict as JSON, or the raw text of a reply that is not one
    error_kind: str = ""
    error: str = ""
    # A failure that may pass on its own (a 5xx, a 429, a reply that is not a verdict).
    transient: bool = False


async def _call(client: AsyncOpenAI, target: ProbeTarget) -> str:
    """One chat-completions request, marked as a judge's test (X-Judge-Probe); its text."""
    body = {
        "model": target.model,
        "messages": PROBE_MESSAGES,
        "temperature": target.temperature,
        "max_tokens": PROBE_MAX_TOKENS,
        "response_format": {"type": "json_object"},
    }
    raw = await client.post(
        "/chat/completions",
        body=body,
        cast_to=object,
        options={"timeout": target.timeout_s, "headers": {"X-Judge-Probe": "1"}},
    )
    choices = raw.get("choices") if isinstance(raw, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedOutput("the reply has no choices")
    message = choices[0].get("message")
    text = message.get("content") if isinstance(message, dict) else None
    return text if isinstance(text, str) else ""


def _refusal(exc: BaseException) -> EndpointRefused | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, EndpointRefused):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _status_error(exc: BaseException, model: str) -> tuple[str, str] | None:
    import openai

    if not isinstance(exc, openai.APIStatusError):
        return None
    body = exc.body if isinstance(exc.body, dict) else {}
    detail = body.get("message") or str(exc)
    text = f"HTTP {exc.status_code}: {detail}"
    code = str(body.get("code") or "")
    if exc.status_code == 404 or "model" in code:
        return ProbeError.UNKNOWN_MODEL, f"{text} (is “{model}” a model this endpoint serves?)"
    if exc.status_code in (401, 403):
        return ProbeError.AUTH, text
    return ProbeError.HTTP_ERROR, text


def describe_failure(exc: BaseException, model: str) -> tuple[str, str]:
    """(kind, message) of a failed probe call."""
    refused = _refusal(exc)
    if refused is not None:
        return ProbeError.REFUSED, refused.message
    status = _status_error(exc, model)
    if status is not None:
        return status
    info = classify_error(exc)
    cause = exc.__cause__ or exc.__context__
    detail = f"{info.message} ({type(cause).__name__}: {cause})" if cause else info.message
    kinds = {
        "timeout": ProbeError.TIMEOUT,
        "connection": ProbeError.UNREACHABLE,
        "malformed": ProbeError.MALFORMED,
        "malformed_response": ProbeError.MALFORMED,
    }
    return kinds.get(info.kind, ProbeError.UNEXPECTED), detail


async def probe(target: ProbeTarget) -> ProbeResult:
    """Make the one call; never raises for what the endpoint or the network does."""
    started = time.perf_counter()
    try:
        client = make_client(
            target.base_url,
            target.api_key,
            timeout_s=target.timeout_s,
            allowed_hosts=target.allowed_hosts,
        )
    except EndpointRefused as exc:
        return ProbeResult(False, error_kind=ProbeError.REFUSED, error=exc.message)
    try:
        text = await _call(client, target)
    except Exception as exc:  # described below, by kind
        kind, message = describe_failure(exc, target.model)
        latency = time.perf_counter() - started
        transient = classify_error(exc).retryable and kind != ProbeError.UNREACHABLE
        return ProbeResult(False, latency, error_kind=kind, error=message, transient=transient)
    finally:
        await client.close()
    latency = time.perf_counter() - started
    problems = []
    for task in PROBE_TASKS:
        try:
            parsed = parse_judge_output(text, task)
        except MalformedOutput as exc:
            problems.append(exc.message)
            continue
        return ProbeResult(True, latency, reply=json.dumps(asdict(parsed), ensure_ascii=False))
    return ProbeResult(
        False,
        latency,
        reply=text[:2000],
        error_kind=ProbeError.MALFORMED,
        error=problems[0],
        transient=True,
    )
