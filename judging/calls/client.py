"""Calling an LLM judge over any OpenAI-compatible endpoint, with retries owned here.

The SDK's own retries are switched off (max_retries=0) so that one layer decides backoff,
honours Retry-After, counts attempts and retries malformed verdicts too. The SDK is imported
by the functions that need it: the messages and outcomes defined here are also used by
processes that never call a judge (a web process).
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.egress import EndpointRefused, url_target
from judging.calls.output import JudgeOutput, MalformedOutput, parse_judge_output
from judging.prompts import PromptTemplate, render

if TYPE_CHECKING:
    import httpx2
    from openai import AsyncOpenAI

ImageInput = tuple[bytes, str] | str  # (bytes, mime type) or a URL
AudioInput = tuple[bytes, str]  # (bytes, format such as "wav" or "mp3")


@dataclass(frozen=True)
class CallResult:
    """One successful chat-completions call."""

    text: str
    latency_s: float
    prompt_tokens: int | None
    completion_tokens: int | None
    raw: dict[str, Any]


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions request as a judge is asked it."""

    model: str
    messages: list[dict[str, Any]]
    temperature: float = 0.0
    timeout: float = 60.0
    max_tokens: int = 512
    json_mode: bool = True


@dataclass(frozen=True)
class ErrorInfo:
    """How a failed attempt should be handled."""

    kind: str
    retryable: bool
    message: str
    retry_after_s: float | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter, capped; Retry-After from the server wins."""

    max_attempts: int = 5
    max_malformed: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 300.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Delay before retry number `attempt` (1-based): half fixed, half random."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return float(ceiling / 2 + rng.uniform(0, ceiling / 2))


@dataclass
class JudgeOutcome:
    """A parsed verdict, or the final error; with the attempts it took."""

    verdict: JudgeOutput | None
    attempts: int
    call: CallResult | None = None
    error: ErrorInfo | None = None
    errors: list[ErrorInfo] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when a valid verdict was obtained."""
        return self.verdict is not None


def make_client(
    base_url: str,
    api_key: str = "not-needed",
    *,
    timeout_s: float = 60.0,
    allowed_hosts: frozenset[str] = frozenset(),
) -> AsyncOpenAI:
    """An AsyncOpenAI client whose own retries are off, so judge_with_retries owns them.

    Its connections go only to public addresses, or to the ``host:port`` entries of
    `allowed_hosts`, checked on the address each connection actually uses (core.egress);
    redirects are not followed. EndpointRefused for a URL that is not http(s).
    """
    from openai import AsyncOpenAI

    from core.egress_transport import guarded_client

    url_target(base_url)
    return AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        timeout=timeout_s,
        max_retries=0,
        http_client=guarded_client(allowed_hosts, timeout_s=timeout_s),
    )


def _image_part(image: ImageInput) -> dict[str, Any]:
    if isinstance(image, str):
        url = image
    else:
        data, mime = image
        url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


def _audio_part(audio: AudioInput) -> dict[str, Any]:
    data, audio_format = audio
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "input_audio", "input_audio": {"data": encoded, "format": audio_format}}


def build_messages(
    template: PromptTemplate,
    fields: Mapping[str, object],
    images: Sequence[ImageInput] = (),
    audio: Sequence[AudioInput] = (),
    text_only: bool = False,
) -> list[dict[str, Any]]:
    """Chat messages for a judge: media as content parts, or descriptions when text-only."""
    prompt = render(template, fields, text_only=text_only)
    content: str | list[dict[str, Any]]
    if text_only or (not images and not audio):
        content = prompt.user
    else:
        parts = [{"type": "text", "text": prompt.user}]
        parts += [_image_part(image) for image in images]
        parts += [_audio_part(clip) for clip in audio]
        content = parts
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": content}]


async def call_judge(client: AsyncOpenAI, request: ChatRequest) -> CallResult:
    """One chat-completions request; raises the SDK's errors unchanged."""
    extra: dict[str, Any] = {}
    if request.json_mode:
        extra["response_format"] = {"type": "json_object"}
    started = time.perf_counter()
    completion = await client.chat.completions.create(
        model=request.model,
        messages=request.messages,  # type: ignore[arg-type]
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        timeout=request.timeout,
        **extra,
    )
    latency = time.perf_counter() - started
    if not completion.choices:
        raise MalformedOutput("response has no choices")
    usage = completion.usage
    return CallResult(
        text=completion.choices[0].message.content or "",
        latency_s=latency,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        raw=completion.model_dump(),
    )


async def call_judge_lean(client: AsyncOpenAI, request: ChatRequest) -> CallResult:
    """call_judge without the SDK's typed request transform and response models.

    The same request, the same errors (raised by the SDK's transport), the same result; the
    typed (de)serialisation costs several milliseconds of CPU per call, which at hundreds of
    calls per second is what limits a worker.
    """
    body: dict[str, Any] = {
        "model": request.model,
        "messages": request.messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    if request.json_mode:
        body["response_format"] = {"type": "json_object"}
    started = time.perf_counter()
    raw = await client.post(
        "/chat/completions", body=body, cast_to=object, options={"timeout": request.timeout}
    )
    latency = time.perf_counter() - started
    if not isinstance(raw, dict):
        raise MalformedOutput("response is not a JSON object")
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedOutput("response has no choices")
    message = choices[0].get("message")
    text = message.get("content") if isinstance(message, dict) else None
    usage = raw.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    return CallResult(
        text=text if isinstance(text, str) else "",
        latency_s=latency,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        raw=raw,
    )


def parse_retry_after(headers: Mapping[str, str] | httpx2.Headers | None) -> float | None:
    """Seconds to wait from retry-after-ms, or Retry-After as seconds or an HTTP date."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


def classify_error(exc: BaseException) -> ErrorInfo:
    """Retryable (timeouts, connection, 429, 5xx, malformed) or final (other 4xx, auth, an
    address the rules refuse, a redirect)."""
    if isinstance(exc, EndpointRefused):
        return ErrorInfo("refused", False, exc.message)
    import httpx2
    import openai

    message = f"{type(exc).__name__}: {exc}"
    # Order matters: APITimeoutError subclasses APIConnectionError.
    if isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException | asyncio.TimeoutError):
        return ErrorInfo("timeout", True, message)
    if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
        return ErrorInfo("connection", True, message)
    if isinstance(exc, openai.RateLimitError):
        retry_after = parse_retry_after(exc.response.headers)
        return ErrorInfo("rate_limited", True, message, retry_after)
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return ErrorInfo("auth", False, message)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status >= 500 or status == 408:
            return ErrorInfo("server_error", True, message, parse_retry_after(exc.response.headers))
        return ErrorInfo("client_error", False, message)
    if isinstance(exc, MalformedOutput):
        return ErrorInfo("malformed", True, f"malformed output: {exc.message}")
    if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError):
        return ErrorInfo("malformed_response", True, message)
    return ErrorInfo("unexpected", False, message)


async def judge_with_retries(
    client: AsyncOpenAI,
    model: str,
    messages: list[dict[str, Any]],
    task: str,
    *,
    policy: RetryPolicy | None = None,
    temperature: float = 0.0,
    timeout: float = 60.0,
    max_tokens: int = 512,
    json_mode: bool = True,
    before_attempt: Callable[[], Awaitable[object]] | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rng: random.Random | None = None,
    call: Callable[..., Awaitable[CallResult]] = call_judge,
) -> JudgeOutcome:
    """Call the judge until a valid verdict or a final error; never raises for API errors.

    `before_attempt` runs before every attempt (e.g. a shared rate limiter's acquire);
    `call` makes one request, `call(client, request)` (call_judge, or call_judge_lean where CPU
    matters).
    """
    policy = policy or RetryPolicy()
    rng = rng or random.Random()  # noqa: S311 - jitter, not security
    request = ChatRequest(model, messages, temperature, timeout, max_tokens, json_mode)
    errors: list[ErrorInfo] = []
    malformed = 0
    for attempt in range(1, policy.max_attempts + 1):
        if before_attempt is not None:
            await before_attempt()
        try:
            result = await call(client, request)
            verdict = parse_judge_output(result.text, task)
            return JudgeOutcome(verdict, attempt, call=result, errors=errors)
        except Exception as exc:  # classified below; unknown ones are final
            info = classify_error(exc)
        errors.append(info)
        if info.kind == "malformed":
            malformed += 1
        if not info.retryable or malformed >= policy.max_malformed:
            return JudgeOutcome(None, attempt, error=info, errors=errors)
        if attempt == policy.max_attempts:
            break
        if info.retry_after_s is not None:
            delay = min(info.retry_after_s, policy.max_retry_after_s)
        else:
            delay = policy.backoff(attempt, rng)
        await sleep(delay)
    return JudgeOutcome(None, policy.max_attempts, error=errors[-1], errors=errors)
