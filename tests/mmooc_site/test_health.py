"""/healthz/ asks the database, the broker and the cache, and names what is down."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.conftest import site_broker
from tests.support.processes import free_port

pytestmark = pytest.mark.django_db


def test_healthz_answers_200_when_everything_answers() -> None:
    response = Client().get("/healthz/")
    assert response.status_code == 200
    assert response.json() == {
        "ok": True,
        "checks": {"database": "ok", "broker": "ok", "cache": "ok"},
        "down": [],
    }


@pytest.mark.redis
def test_healthz_answers_503_naming_the_broker_when_redis_is_down() -> None:
    """With the broker's Redis gone, 503 says so, without the address in the body."""
    dead = f"redis://127.0.0.1:{free_port()}/0"
    with site_broker(dead):
        response = Client().get("/healthz/")
    assert response.status_code == 503
    body = response.json()
    assert body["ok"] is False and body["down"] == ["broker"]
    assert body["checks"]["database"] == "ok" and "127.0.0.1" not in response.content.decode()


def test_healthz_answers_503_naming_the_cache_when_it_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cache is asked through Django's cache API, whatever its backend."""
    from django.core.cache import cache

    def broken(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("cache server gone")

    monkeypatch.setattr(cache, "set", broken)
    response = Client().get("/healthz/")
    assert response.status_code == 503 and response.json()["down"] == ["cache"]


def test_healthz_answers_503_naming_the_cache_when_its_redis_is_down(settings: Any) -> None:
    """A Redis cache is asked with a write, a read and a delete; gone, it is named."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
        }
    }
    response = Client().get("/healthz/")
    assert response.status_code == 503 and response.json()["down"] == ["cache"]


def test_livez_answers_without_asking_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    from mmooc_site import health

    monkeypatch.setattr(health, "check_all", lambda: pytest.fail("livez asked the services"))
    assert Client().get("/livez/").json() == {"ok": True}
