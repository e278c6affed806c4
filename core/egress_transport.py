"""The network layer of outgoing calls: resolve, check, then connect to the checked address.

Kept apart from the rules (:mod:`core.egress`) so that only the processes that make judge calls
or deliver webhooks load httpx and httpcore.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

import anyio
import httpcore2
import httpx2

from core.egress import (
    JUDGE_SETTING,
    Address,
    EndpointRefused,
    _addresses,
    _ip_literal,
    _refusal,
    host_port,
)


class GuardedBackend(httpcore2.AsyncNetworkBackend):
    """Resolves, checks and connects to the checked address itself; refuses unix sockets."""

    def __init__(self, allowed: frozenset[str], setting: str = JUDGE_SETTING) -> None:
        self.allowed = allowed
        self.setting = setting
        self._inner = httpcore2.AnyIOBackend()

    async def _resolve(self, host: str, port: int, timeout: float | None) -> list[Address]:
        literal = _ip_literal(host)
        if literal is not None:
            return [literal]
        try:
            with anyio.fail_after(timeout):
                infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except TimeoutError as exc:
            raise httpcore2.ConnectTimeout(f"resolving {host} timed out") from exc
        except (OSError, UnicodeError) as exc:
            raise httpcore2.ConnectError(f"cannot resolve {host}: {exc}") from exc
        return _addresses(infos)

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        addresses = await self._resolve(host, port, timeout)
        checked = host_port(host, port) not in self.allowed
        refusal = _refusal(host, port, addresses) if checked else None
        if refusal is not None:
            raise EndpointRefused(refusal.english(self.setting))
        error: Exception = httpcore2.ConnectError(f"no address for {host}")
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                error = exc
                continue
            peer = stream.get_extra_info("server_addr")
            connected = ipaddress.ip_address(str(peer[0]).split("%", 1)[0]) if peer else address
            refusal = _refusal(host, port, [connected]) if checked else None
            if connected != address or refusal is not None:  # pragma: no cover - defensive
                await stream.aclose()
                raise EndpointRefused(f"refused: connected to {connected}, not {address}")
            return stream
        raise error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise EndpointRefused("refused: calls go over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx2.AsyncHTTPTransport):
    """httpx's transport with the connection pool on a `GuardedBackend`; no proxies from the
    environment (a proxy would connect on the worker's behalf, unchecked)."""

    def __init__(
        self, allowed: frozenset[str], limits: httpx2.Limits, setting: str = JUDGE_SETTING
    ) -> None:
        super().__init__(limits=limits, trust_env=False)
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=httpx2.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(allowed, setting),
        )


def guarded_client(
    allowed: frozenset[str],
    *,
    timeout_s: float,
    setting: str = JUDGE_SETTING,
    max_connections: int = 1000,
) -> httpx2.AsyncClient:
    """An HTTP client for outgoing calls: checked addresses, no redirects, no env proxies;
    refusals name ``setting``, the allowed-hosts setting to change."""
    limits = httpx2.Limits(
        max_connections=max_connections, max_keepalive_connections=min(100, max_connections)
    )
    return httpx2.AsyncClient(
        transport=GuardedTransport(allowed, limits, setting),
        timeout=httpx2.Timeout(timeout_s, connect=min(timeout_s, 5.0)),
        follow_redirects=False,
        trust_env=False,
    )
