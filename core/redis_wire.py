"""A few Redis commands over a plain socket, for the web process's hot paths.

redis-py 8 loads its asyncio client, cluster support and every command's wrapper with the
package: about 20 MB in each web process, although ordinary requests send Redis at most two
commands (the API's rate limit reserving a block of calls: INCRBY and EXPIRE) and /healthz/ a
ping. This client speaks the
protocol (RESP2) for those: one connection per thread, the commands of a call sent together
(a pipeline, one round trip), a broken connection opened again once. Everything else (the
cache's other uses, Celery, the judges' rate limiter) keeps redis-py, which then loads where
it is used.

URLs: ``redis://[[user]:password@]host[:port][/db]`` and ``rediss://`` (TLS, the server's
certificate checked against the system's authorities).
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import unquote, urlsplit

from django.conf import settings

TIMEOUT_SECONDS = 5.0
_REDIS_CACHE = "django.core.cache.backends.redis.RedisCache"


class RedisWireError(Exception):
    """The server answered a command with an error, or could not be reached."""


Reply = int | bytes | str | list[Any] | RedisWireError | None


@dataclass(frozen=True)
class Address:
    host: str
    port: int
    db: int
    username: str | None
    password: str | None
    tls: bool

    @classmethod
    def of(cls, url: str) -> Address:
        parts = urlsplit(url)
        if parts.scheme not in {"redis", "rediss"}:
            raise ValueError(f"not a redis:// URL: {parts.scheme}://")
        path = parts.path.strip("/")
        return cls(
            host=parts.hostname or "localhost",
            port=parts.port or 6379,
            db=int(path) if path else 0,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password is not None else None,
            tls=parts.scheme == "rediss",
        )


def _encode(command: tuple[str | int | bytes, ...]) -> bytes:
    out = [b"*%d\r\n" % len(command)]
    for arg in command:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


class _Reader:
    def __init__(self, sock: socket.socket) -> None:
        self.file = sock.makefile("rb")

    def reply(self) -> Reply:
        line = self.file.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("the Redis server closed the connection")
        kind, body = line[:1], line[1:-2]
        if kind == b"+":
            return body.decode()
        if kind == b"-":
            return RedisWireError(body.decode(errors="replace"))
        if kind == b":":
            return int(body)
        if kind == b"$":
            size = int(body)
            if size < 0:
                return None
            data = self.file.read(size + 2)
            if len(data) != size + 2:
                raise ConnectionError("the Redis server closed the connection")
            return data[:-2]
        if kind == b"*":
            count = int(body)
            return None if count < 0 else [self.reply() for _ in range(count)]
        raise ConnectionError(f"unexpected reply from the Redis server: {line[:40]!r}")


class RedisWire:
    """A client for one server; safe to share between threads (one connection each)."""

    def __init__(self, url: str, *, timeout: float = TIMEOUT_SECONDS) -> None:
        self.address = Address.of(url)
        self.timeout = timeout
        self._local = threading.local()
        self._pid = os.getpid()

    def _connect(self) -> tuple[socket.socket, _Reader]:
        address = self.address
        sock = socket.create_connection((address.host, address.port), timeout=self.timeout)
        try:
            if address.tls:
                import ssl

                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=address.host)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            reader = _Reader(sock)
            setup: list[tuple[str | int | bytes, ...]] = []
            if address.password is not None:
                auth = (address.username, address.password) if address.username else ()
                setup.append(("AUTH", *auth) if auth else ("AUTH", address.password))
            if address.db:
                setup.append(("SELECT", address.db))
            if setup:
                sock.sendall(b"".join(_encode(c) for c in setup))
                for _ in setup:
                    answer = reader.reply()
                    if isinstance(answer, RedisWireError):
                        raise answer
        except BaseException:
            sock.close()
            raise
        return sock, reader

    def close(self) -> None:
        """Close this thread's connection (the next call opens another)."""
        held = getattr(self._local, "conn", None)
        self._local.conn = None
        if held is not None:
            held[0].close()

    def execute(self, *commands: tuple[str | int | bytes, ...]) -> list[Reply]:
        """Send the commands in one round trip; their replies, in order. An error reply
        raises RedisWireError; so does a server that cannot be reached (after one retry on
        a fresh connection, for a connection the server had closed)."""
        payload = b"".join(_encode(c) for c in commands)
        replies: list[Reply] = []
        for attempt in (1, 2):
            if self._pid != os.getpid():  # forked (gunicorn --preload): the parent's sockets
                self._local, self._pid = threading.local(), os.getpid()  # stay the parent's
            held = getattr(self._local, "conn", None)
            fresh = held is None
            try:
                if held is None:
                    held = self._local.conn = self._connect()
                sock, reader = held
                sock.sendall(payload)
                replies = [reader.reply() for _ in commands]
                break
            except (OSError, ValueError) as exc:
                self.close()
                if fresh or attempt == 2:
                    raise RedisWireError(f"Redis does not answer: {exc}") from exc
        for reply in replies:
            if isinstance(reply, RedisWireError):
                raise reply
        return replies

    def ping(self) -> bool:
        return self.execute(("PING",)) == ["PONG"]


@cache
def _client(location: str) -> RedisWire:
    return RedisWire(location)


def cache_redis() -> tuple[RedisWire, str] | None:
    """This module's client of the cache's Redis (its first server, where Django writes) and
    the cache's key prefix, or None when the cache is not Redis or not reached over TCP."""
    default = settings.CACHES["default"]
    if default["BACKEND"] != _REDIS_CACHE:
        return None
    location = default["LOCATION"]
    first = (location[0] if isinstance(location, list | tuple) else location.split(",")[0]).strip()
    if not first.startswith(("redis://", "rediss://")):  # unix://: Django's client serves it
        return None
    return _client(first), default.get("KEY_PREFIX", "")
