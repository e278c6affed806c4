"""What /healthz/ asks: the database, the Celery broker and the cache, each within seconds."""

from __future__ import annotations

import logging
import uuid

from django.core.cache import cache
from django.db import connection

from mmooc_site.celery import app

logger = logging.getLogger(__name__)


def database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return bool(cursor.fetchone() == (1,))
    except Exception:
        logger.warning("health: the database does not answer", exc_info=True)
        return False


def broker_ok() -> bool:
    try:
        with app.connection_for_write() as broker:
            broker.ensure_connection(max_retries=0)
            broker.default_channel  # noqa: B018 - opening a channel is the check
        return True
    except Exception:
        logger.warning("health: the broker does not answer", exc_info=True)
        return False


def cache_ok() -> bool:
    key = f"healthz:{uuid.uuid4().hex}"
    try:
        cache.set(key, "1", timeout=10)
        ok = bool(cache.get(key) == "1")
        cache.delete(key)
        return ok
    except Exception:
        logger.warning("health: the cache does not answer", exc_info=True)
        return False


def check_all() -> dict[str, bool]:
    return {"database": database_ok(), "broker": broker_ok(), "cache": cache_ok()}
