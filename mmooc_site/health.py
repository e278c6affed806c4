"""What /healthz/ asks: the database, the Celery broker and the cache, each within seconds."""

from __future__ import annotations

import logging
import uuid

from django.core.cache import cache
from django.db import connection

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
    """A ping with redis-py on a connection of its own, closed after it (kombu's connection
    would retry and keep a pool)."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=_TIMEOUT, socket_timeout=_TIMEOUT)
    try:
        return bool(client.ping())
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
    """Write, read and delete a key through Django's cache API."""
    name = f"healthz:{key}"
    cache.set(name, "1", timeout=10)
    ok = bool(cache.get(name) == "1")
    cache.delete(name)
    return ok


def cache_ok() -> bool:
    try:
        return cache_round_trip(uuid.uuid4().hex)
    except Exception:
        logger.warning("health: the cache does not answer", exc_info=True)
        return False


def check_all() -> dict[str, bool]:
    return {"database": database_ok(), "broker": broker_ok(), "cache": cache_ok()}
