"""The small Redis client of the web process's hot paths (core/redis_wire.py)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from core.redis_wire import Address, RedisWire, RedisWireError, cache_redis
from tests.support.processes import free_port


def test_an_address_reads_host_port_database_credentials_and_tls() -> None:
    """The URL's parts as redis-py reads them: database 0 and port 6379 unless given, the
    password unquoted, rediss:// for TLS; another scheme is refused."""
    assert Address.of("redis://cache.internal") == Address(
        "cache.internal", 6379, 0, None, None, tls=False
    )
    assert Address.of("rediss://bob:p%40ss@10.0.0.5:6380/4") == Address(
        "10.0.0.5", 6380, 4, "bob", "p@ss", tls=True
    )
    assert Address.of("redis://:secret@h/2").password == "secret"
    with pytest.raises(ValueError, match="not a redis"):
        Address.of("amqp://h/")


def test_a_server_that_does_not_answer_is_an_error() -> None:
    client = RedisWire(f"redis://127.0.0.1:{free_port()}/0", timeout=1)
    with pytest.raises(RedisWireError, match="does not answer"):
        client.ping()


@pytest.fixture
def client() -> Any:
    wire = RedisWire(os.environ["REDIS_URL"])
    yield wire
    wire.close()


@pytest.mark.redis
def test_commands_sent_together_answer_in_order(client: RedisWire) -> None:
    """A pipeline of several commands: integers, bulk strings, nil, arrays, status."""
    key = f"wire-test:{os.getpid()}"
    replies = client.execute(
        ("DEL", key),
        ("INCR", key),
        ("INCR", key),
        ("EXPIRE", key, 30),
        ("GET", key),
        ("GET", key + ":missing"),
        ("MGET", key, key + ":missing"),
        ("SET", key + ":text", "né"),
        ("GET", key + ":text"),
        ("DEL", key, key + ":text"),
    )
    assert replies == [0, 1, 2, 1, b"2", None, [b"2", None], "OK", "né".encode(), 2]
    assert client.ping()


@pytest.mark.redis
def test_an_error_reply_raises_and_the_connection_stays_usable(client: RedisWire) -> None:
    key = f"wire-test-error:{os.getpid()}"
    client.execute(("SET", key, "text"))
    with pytest.raises(RedisWireError, match="not an integer"):
        client.execute(("INCR", key), ("DEL", key))
    assert client.execute(("EXISTS", key)) == [0]  # the DEL after the error ran


@pytest.mark.redis
def test_a_connection_the_server_closed_is_opened_again(client: RedisWire) -> None:
    """The server closing an idle connection (a timeout, a restart) costs no failed call."""
    (own_id,) = client.execute(("CLIENT", "ID"))
    assert isinstance(own_id, int)
    other = RedisWire(os.environ["REDIS_URL"])
    assert other.execute(("CLIENT", "KILL", "ID", own_id)) == [1]
    other.close()
    assert client.ping()
    assert client.execute(("CLIENT", "ID")) != [own_id]


@pytest.mark.redis
def test_a_forked_process_opens_its_own_connection(client: RedisWire) -> None:
    """A client made before a fork (gunicorn --preload) does not share its socket with the
    child: the child's calls go through a connection of its own."""
    (parent_id,) = client.execute(("CLIENT", "ID"))
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reports its connection's id, then leaves at once
        try:
            os.write(write_end, str(client.execute(("CLIENT", "ID"))[0]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        child_id = int(handle.read() or b"0")
    os.waitpid(pid, 0)
    assert child_id not in (0, parent_id)
    assert client.execute(("CLIENT", "ID")) == [parent_id]


@pytest.mark.redis
def test_the_database_of_the_url_is_selected(client: RedisWire) -> None:
    """Keys land in the URL's database, as the cache's own client puts them."""
    (info,) = client.execute(("CLIENT", "INFO"))
    assert isinstance(info, bytes)
    assert f" db={client.address.db} ".encode() in info


def test_the_cache_client_is_the_first_server_of_a_redis_cache(settings: Any) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://primary:6379/1, redis://replica:6379/1",
            "KEY_PREFIX": "site",
        }
    }
    shared = cache_redis()
    assert shared is not None
    assert (shared[0].address.host, shared[0].address.db, shared[1]) == ("primary", 1, "site")
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "unix:///run/redis.sock",
        }
    }
    assert cache_redis() is None  # a socket file: Django's own client (redis-py) serves it
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    assert cache_redis() is None
