"""Where outgoing calls may go (core.egress, core.egress_transport), as judge calls use them:
key variables by prefix, http(s) URLs, and only public addresses unless host:port is allowed,
checked on the address actually connected to."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest

from core import egress
from judging.calls.client import JudgeOutcome, RetryPolicy, judge_with_retries, make_client
from tests.support.fake_openai import FakeOpenAI

MESSAGES = [{"role": "user", "content": 'Reply with JSON only: {"answer_score": 0 or 1}'}]
POLICY = RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.02)


def call(base_url: str, allowed: frozenset[str] = frozenset()) -> JudgeOutcome:
    async def run() -> JudgeOutcome:
        client = make_client(base_url, timeout_s=5, allowed_hosts=allowed)
        try:
            return await judge_with_retries(
                client, "fake", MESSAGES, "mmooc_scoring", policy=POLICY
            )
        finally:
            await client.close()

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        ("", True),
        ("JUDGE_KEY_OPENAI", True),
        ("JUDGE_KEY_", False),
        ("SECRET_KEY", False),
        ("DATABASE_URL", False),
        ("judge_key_openai", False),
        ("OPENAI_API_KEY", False),
    ],
)
def test_key_variables_need_the_prefix(name: str, allowed: bool) -> None:
    """Only names that start with the prefix (and go on after it) may hold a judge's key."""
    assert egress.key_env_allowed(name, "JUDGE_KEY_") is allowed
    assert egress.suggested_key_env("OPENAI_API_KEY", "JUDGE_KEY_") == "JUDGE_KEY_OPENAI_API_KEY"


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fc00::1", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("0.0.0.0", "private"),
        ("100.64.0.1", "non-public"),
        ("224.0.0.1", "non-public"),
        ("8.8.8.8", None),
        ("2606:4700::1111", None),
    ],
)
def test_addresses_are_classified(address: str, reason: str | None) -> None:
    """Loopback, private, link-local, metadata and other non-public addresses are named;
    public ones pass."""
    assert egress.address_reason(ipaddress.ip_address(address)) == reason


def test_allowed_hosts_are_host_port_entries() -> None:
    """Entries are normalised (case, IPv6 brackets); an entry without a port is an error."""
    allowed = egress.parse_allowed_hosts(["LocalHost:11434", " [::1]:8000 ", ""])
    assert allowed == {"localhost:11434", "[::1]:8000"}
    with pytest.raises(ValueError, match="not host:port"):
        egress.parse_allowed_hosts(["127.0.0.1"])


@pytest.mark.parametrize("url", ["ftp://h/v1", "file:///etc/passwd", "gopher://h", "h/v1"])
def test_only_http_and_https_urls(url: str) -> None:
    """Any other scheme is refused, when saved and by make_client."""
    with pytest.raises(egress.EndpointRefused, match="not an http"):
        egress.check_url(url, frozenset())
    with pytest.raises(egress.EndpointRefused):
        make_client(url)


def test_saved_urls_are_checked_on_what_the_host_names_or_resolves_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Literal addresses and localhost need no DNS; a name is resolved; an allowed host:port
    passes; a name that does not resolve passes (the call checks again)."""
    assert egress.check_url("http://127.0.0.1:6379", frozenset()) == egress.Refusal(
        "127.0.0.1:6379", "127.0.0.1", "loopback"
    )
    refused = egress.check_url("http://localhost/v1", frozenset())
    assert refused is not None and refused.host_port == "localhost:80"
    assert egress.check_url("http://[::1]:8000/v1", frozenset({"[::1]:8000"})) is None

    def fake_dns(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host == "internal.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", port))]
        raise socket.gaierror("no such name")

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    refused = egress.check_url("https://internal.example/v1", frozenset())
    assert refused == egress.Refusal("internal.example:443", "10.0.0.7", "private")
    assert egress.check_url("https://internal.example/v1", frozenset(), resolve=False) is None
    assert egress.check_url("https://nowhere.example/v1", frozenset()) is None


def test_a_loopback_endpoint_is_refused_at_call_time_unless_allowed() -> None:
    """The fake server on 127.0.0.1 is never contacted without an allowance: the call ends at
    once with a final "refused" error naming what to allow; with it, the call succeeds."""
    with FakeOpenAI() as server:
        refused = call(server.base_url)
        assert server.chat_records() == []
        allowed = call(server.base_url, server.allowed)
    assert refused.error is not None and refused.error.kind == "refused"
    assert refused.attempts == 1 and not refused.error.retryable
    assert f"list {server.host_port} in JUDGE_ALLOWED_HOSTS" in refused.error.message
    assert allowed.ok


def test_the_address_connected_to_is_the_one_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A name whose DNS answer is a loopback address (DNS rebinding) is refused at connect time;
    when its host:port is allowed, the connection goes to exactly the address resolved."""
    resolved: list[str] = []

    async def rebinding_dns(host: str, port: Any, **kwargs: Any) -> list[Any]:
        resolved.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(anyio, "getaddrinfo", rebinding_dns)
    with FakeOpenAI() as server:
        url = f"http://judge.example:{server.port}/v1"
        refused = call(url)
        assert server.chat_records() == []
        allowed = call(url, frozenset({f"judge.example:{server.port}"}))
        assert len(server.chat_records()) == 1
    assert refused.error is not None and refused.error.kind == "refused"
    assert "judge.example" in refused.error.message and "127.0.0.1" in refused.error.message
    assert allowed.ok and resolved == ["judge.example", "judge.example"]


def test_ipv6_loopback_is_refused_at_call_time() -> None:
    """[::1] is as refused as 127.0.0.1 (nothing needs to listen there)."""
    outcome = call("http://[::1]:9/v1")
    assert outcome.error is not None and outcome.error.kind == "refused"


class _Redirect(BaseHTTPRequestHandler):
    target = ""
    hits: list[str] = []

    def do_POST(self) -> None:
        self.hits.append(self.path)
        self.send_response(307)
        self.send_header("Location", self.target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def redirecting() -> Iterator[tuple[ThreadingHTTPServer, type[_Redirect]]]:
    handler = type("Handler", (_Redirect,), {"hits": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, handler
    finally:
        server.shutdown()
        server.server_close()


def test_redirects_are_not_followed(redirecting: tuple[ThreadingHTTPServer, Any]) -> None:
    """An allowed endpoint that redirects (here to another allowed server) gets a final error;
    the redirect's target is never called."""
    server, handler = redirecting
    with FakeOpenAI() as target:
        handler.target = f"{target.base_url}/chat/completions"
        here = f"127.0.0.1:{server.server_address[1]}"
        outcome = call(f"http://{here}/v1", frozenset({here, target.host_port}))
        assert target.chat_records() == []
    assert handler.hits == ["/v1/chat/completions"]
    assert outcome.error is not None and outcome.error.kind == "client_error"
    assert outcome.attempts == 1
