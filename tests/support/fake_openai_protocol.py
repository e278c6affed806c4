"""The fake OpenAI server's protocol parts: fault kinds, request records, prompt hashing and
the default verdicts it answers with (no server here; see ``fake_openai``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

FAULT_KINDS = (
    "error_500",
    "rate_limit",
    "hang",
    "malformed",
    "truncated",
    "bad_request",
    "invalid_body",
)
REASONING_SCORES = (0, 0.25, 0.5, 0.75, 1)

Responder = Callable[[dict[str, Any], str], str]

REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests"}


@dataclass
class RequestRecord:
    """One request as the server saw it; times are time.monotonic() in this process."""

    index: int
    method: str
    path: str
    received_at: float
    prompt_hash: str | None
    fault: str | None
    body: dict[str, Any] | None
    status: int | None = None
    responded_at: float | None = None
    # A judge's test call (header X-Judge-Probe), which scripted faults leave alone.
    probe: bool = False
    # The caller's address: which host made the call, when hosts have addresses of their own.
    client: str = ""


def prompt_text(request: Mapping[str, Any]) -> str:
    """All text of a chat request's messages, in order (media parts left out)."""
    chunks: list[str] = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            chunks.append(content)
        elif isinstance(content, list):
            chunks.extend(part.get("text", "") for part in content if part.get("type") == "text")
    return "\n".join(chunks)


def hash_prompt(request: Mapping[str, Any]) -> str:
    """A short stable hash of the request's prompt text."""
    return hashlib.sha256(prompt_text(request).encode("utf-8")).hexdigest()[:16]


def default_responder(request: dict[str, Any], digest: str) -> str:
    """A valid JSON verdict for the task the prompt asks for, fixed per prompt hash."""
    text = prompt_text(request)
    seed = int(digest, 16)
    if '"answer_score"' in text:
        verdict: dict[str, Any] = {
            "answer_score": seed % 2,
            "reasoning_score": REASONING_SCORES[(seed >> 3) % 5],
            "reason": f"fake verdict {digest[:6]}",
        }
    elif '"answerable"' in text:
        verdict = {"answerable": bool(seed % 2), "category": None, "reason": "fake"}
    elif '"label"' in text:
        verdict = {"label": "safe" if seed % 2 else "unsafe", "reason": "fake"}
    else:
        verdict = {"answer_score": 1, "reasoning_score": 0.75, "reason": "fake default"}
    return json.dumps(verdict)


def error_body(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": code, "code": code}}
