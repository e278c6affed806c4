"""Where the site's outgoing calls may go (judge calls, webhook deliveries): http(s) only, public
hosts only, and for judges keys only from prefixed variables.

Django-free, shared by every feature that calls out. The services check a URL when it is saved;
every call connects through ``core.egress_transport.GuardedTransport``, whose network backend
resolves the host itself, checks every address and then connects to that very address, so a
DNS answer that changes between the check and the connection (DNS rebinding) cannot reach a
refused address. Loopback, private, link-local, cloud-metadata and other non-public addresses
are refused unless the URL's ``host:port`` is in the allowed set of the feature's setting
(``JUDGE_ALLOWED_HOSTS``, ``WEBHOOK_ALLOWED_HOSTS``), so a local vLLM, Ollama or receiver can be
allowed explicitly. Redirects are never followed.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

SCHEMES = {"http": 80, "https": 443}
# Instance-metadata endpoints (AWS/GCP/Azure/OpenStack, ECS tasks, Alibaba): named in messages.
METADATA = {
    ipaddress.ip_address("169.254.169.254"),
    ipaddress.ip_address("169.254.170.2"),
    ipaddress.ip_address("100.100.100.200"),
    ipaddress.ip_address("fd00:ec2::254"),
}


# The setting that lists the allowed host:port entries, named in refusals (judges by default).
JUDGE_SETTING = "JUDGE_ALLOWED_HOSTS"


class EndpointRefused(ValueError):
    """A call that may not be made; the message says why and what to change."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Refusal:
    """Why an address is refused: `reason` is loopback, private, link-local, metadata or
    non-public; `host_port` is what the allowed-hosts setting would have to list."""

    host_port: str
    address: str
    reason: str

    def english(self, setting: str = JUDGE_SETTING) -> str:
        return (
            f"refused: {self.host_port} resolves to {self.address}, a {self.reason} address; "
            f"list {self.host_port} in {setting} to allow it"
        )


def key_env_allowed(name: str, prefix: str) -> bool:
    """True for no variable (no key sent) or a name that starts with the prefix and goes on."""
    return not name or (name.startswith(prefix) and len(name) > len(prefix))


def suggested_key_env(name: str, prefix: str) -> str:
    """The name to rename a refused variable to (OPENAI_API_KEY -> JUDGE_KEY_OPENAI_API_KEY)."""
    return prefix + name


def host_port(host: str, port: int) -> str:
    """The ``host:port`` form the allowed-hosts settings list (IPv6 in brackets, lower case)."""
    host = host.strip("[]").rstrip(".").lower()
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def parse_allowed_hosts(entries: Iterable[str], setting: str = JUDGE_SETTING) -> frozenset[str]:
    """Normalised ``host:port`` entries; ValueError names an entry without a port."""
    allowed = set()
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        parsed = urlsplit(f"//{entry}")
        try:
            port = parsed.port
        except ValueError as exc:
            raise ValueError(f"{setting} entry {entry!r} has a bad port") from exc
        if not parsed.hostname or port is None:
            raise ValueError(f"{setting} entry {entry!r} is not host:port")
        allowed.add(host_port(parsed.hostname, port))
    return frozenset(allowed)


def url_target(url: str) -> tuple[str, int]:
    """(host, port) of an http(s) URL; EndpointRefused for any other scheme or no host."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise EndpointRefused(f"refused: {url!r} is not an http:// or https:// URL")
    try:
        port = parts.port or SCHEMES[scheme]
    except ValueError as exc:
        raise EndpointRefused(f"refused: {url!r} has a bad port") from exc
    if not parts.hostname:
        raise EndpointRefused(f"refused: {url!r} names no host")
    return parts.hostname, port


def address_reason(address: Address) -> str | None:
    """Why this address may not be called, or None for a public one."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in METADATA:
        return "cloud metadata"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_private:
        return "private"
    if address.is_multicast or not address.is_global:
        return "non-public"
    return None


def _refusal(host: str, port: int, addresses: Iterable[Address]) -> Refusal | None:
    for address in addresses:
        reason = address_reason(address)
        if reason is not None:
            return Refusal(host_port(host, port), str(address), reason)
    return None


def _ip_literal(host: str) -> Address | None:
    """The address a host that is an IP literal names, else None."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def _is_localhost(host: str) -> bool:
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def _addresses(infos: Iterable[tuple[Any, ...]]) -> list[Address]:
    seen: list[Address] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in seen:
            seen.append(address)
    return seen


def check_url(url: str, allowed: frozenset[str], *, resolve: bool = True) -> Refusal | None:
    """Check a base URL as it is saved: http(s) (EndpointRefused otherwise), and the addresses
    its host names or, with `resolve`, resolves to now (a name that does not resolve passes:
    the call checks again). None when it may be called."""
    host, port = url_target(url)
    if host_port(host, port) in allowed:
        return None
    literal = _ip_literal(host)
    addresses: list[Address] = []
    if literal is not None:
        addresses = [literal]
    elif _is_localhost(host):
        addresses = [ipaddress.ip_address("127.0.0.1")]
    elif resolve:
        try:
            addresses = _addresses(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError):
            addresses = []
    return _refusal(host, port, addresses)
