"""Signing and sending one webhook request, as the Standard Webhooks specification says
(pure: no Django).

A message is ``{"type", "timestamp", "data"}`` as JSON; the headers ``webhook-id`` (the same on
every attempt), ``webhook-timestamp`` (this attempt's, in seconds) and ``webhook-signature``
(``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``, made by the ``standardwebhooks``
library, one per valid secret, space-separated) go with it. The request connects through the
egress guard the judges use (``core.egress_transport``): the address actually connected to
is checked, no redirects are followed, no proxy from the environment is used.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from standardwebhooks.webhooks import Webhook

SETTING = "WEBHOOK_ALLOWED_HOSTS"
USER_AGENT = "mmooc-review-studio-webhooks/1"
RESPONSE_KEPT = 2000


def secret_new() -> str:
    """A new signing secret: ``whsec_`` and 32 random bytes in base64."""
    import base64

    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def message_id_new() -> str:
    return "msg_" + secrets.token_hex(16)


def body_of(payload: Mapping[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def signed_headers(
    *, message_id: str, body: str, secrets_in_use: Sequence[str], at: datetime
) -> dict[str, str]:
    """The headers of one attempt, signed with every secret in use (new first)."""
    signatures = [
        Webhook(secret).sign(msg_id=message_id, timestamp=at, data=body)
        for secret in secrets_in_use
        if secret
    ]
    return {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": " ".join(signatures),
    }


@dataclass(frozen=True)
class Outcome:
    """What one request got: a status and the start of the body, or the error."""

    status_code: int | None
    response_body: str
    error: str
    duration_ms: float

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def send(
    url: str, *, body: str, headers: Mapping[str, str], allowed: frozenset[str], timeout_s: float
) -> Outcome:
    """POST the body; any answer but 2xx (a redirect too), a timeout, a refused address or a
    connection error is an outcome to retry, never an exception."""
    import anyio
    import httpx2

    from core.egress import EndpointRefused, url_target
    from core.egress_transport import guarded_client

    async def post() -> Outcome:
        started = time.perf_counter()

        def took() -> float:
            return (time.perf_counter() - started) * 1000

        try:
            url_target(url)
            async with guarded_client(
                allowed, timeout_s=timeout_s, setting=SETTING, max_connections=1
            ) as client:
                response = await client.post(url, content=body.encode(), headers=dict(headers))
                text = response.text[:RESPONSE_KEPT]
                error = ""
                if 300 <= response.status_code < 400:
                    error = f"redirect to {response.headers.get('location', '?')} not followed"
                return Outcome(response.status_code, text, error, took())
        except EndpointRefused as exc:
            return Outcome(None, "", exc.message, took())
        except httpx2.TimeoutException:
            return Outcome(None, "", f"no answer within {timeout_s:g} s", took())
        except httpx2.HTTPError as exc:
            refused = _refusal(exc)
            message = refused.message if refused is not None else f"{type(exc).__name__}: {exc}"
            return Outcome(None, "", message, took())

    return anyio.run(post)


def _refusal(exc: BaseException) -> Any:
    """The egress refusal behind an HTTP error, if one caused it."""
    from core.egress import EndpointRefused

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, EndpointRefused):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def backoff_seconds(attempt: int, *, base: float, cap: float) -> float:
    """The wait after the ``attempt``-th failed attempt: base, 2 base, 4 base, … at most cap."""
    return float(min(cap, base * (2 ** max(0, attempt - 1))))
