"""What /healthz/ asks: the database, the Celery broker and the cache, each within seconds."""

from __future__ import annotations

import logging
import uuid

from django.core.cache import cache
from django.db import connection

from core import redis_wire
from mmooc_site.celery import app

logger = logging.getLogger(__name__)
_TIMEOUT = 3.0


def database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return bool(cursor.fetchone() == (1,))
    except Exception:
        logger.warning("health: the database does not answer", exc_info=True)
        return False


def _redis_ping(url: str) -> bool:
    """A ping on a connection of its own, without loading kombu's Redis transport and
    redis-py (see core.redis_wire)."""
    client = redis_wire.RedisWire(url, timeout=_TIMEOUT)
    try:
        return client.ping()
    finally:
        client.close()


def broker_ok() -> bool:
    url = (app.conf.broker_write_url or app.conf.broker_url or "").split(";")[0]
    try:
        if url.startswith(("redis://", "rediss://")):
            return _redis_ping(url)
        with app.connection_for_write() as broker:
            broker.ensure_connection(max_retries=0)
            broker.default_channel  # noqa: B018 - opening a channel is the check
        return True
    except Exception:
        logger.warning("health: the broker does not answer", exc_info=True)
        return False


def cache_round_trip(key: str) -> bool:
    """Write, read and delete a key in the cache (on Redis without loading redis-py)."""
    shared = redis_wire.cache_redis()
    if shared is None:
        cache.set(key, "1", timeout=10)
        ok = bool(cache.get(key) == "1")
        cache.delete(key)
        return ok
    client, prefix = shared
    full = f"{prefix}:healthz:{key}"
    _set, value, _deleted = client.execute(
        ("SET", full, "1", "EX", 10), ("GET", full), ("DEL", full)
    )
    return value == b"1"


def cache_ok() -> bool:
    try:
        return cache_round_trip(uuid.uuid4().hex)
    except Exception:
        logger.warning("health: the cache does not answer", exc_info=True)
        return False


def check_all() -> dict[str, bool]:
    return {"database": database_ok(), "broker": broker_ok(), "cache": cache_ok()}
