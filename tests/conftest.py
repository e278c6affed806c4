"""Fixtures shared by every test module: storage, users by role, API clients, real services."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.utils import translation
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from core import roles
from tests.annotation.factories import UserFactory
from tests.support.fake_openai import FakeOpenAI
from tests.support.processes import celery_worker, database_url, s3_client, seaweedfs

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

# Hypothesis: a few examples on a developer's machine, more in CI (CI set); no deadline, as
# examples talk to PostgreSQL and Redis. Tests that give their own settings keep them.
_SLOW_CHECKS = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
hypothesis_settings.register_profile(
    "default", max_examples=10, deadline=None, suppress_health_check=_SLOW_CHECKS
)
hypothesis_settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=_SLOW_CHECKS
)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(autouse=True)
def _language_restored() -> Iterator[None]:
    """A test's request in another language leaves it active in this thread (LocaleMiddleware
    activates it and nothing deactivates it): the next test starts in the default again."""
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _local_media(settings: Any, tmp_path: Path) -> None:
    """Each test stores media in its own folder, never in the developer's var/."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.STORAGES = {
        **django_settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "media"), "base_url": "/media-not-public/"},
        },
    }


@pytest.fixture
def lead(db: None) -> Any:
    return UserFactory.create(role=roles.LEAD)


@pytest.fixture
def annotator(db: None) -> Any:
    return UserFactory.create(role=roles.ANNOTATOR)


@pytest.fixture
def auditor(db: None) -> Any:
    return UserFactory.create(role=roles.AUDITOR)


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


def client_for(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real SeaweedFS S3 server for the whole session."""
    from conftest import weed_binary

    weed = weed_binary()
    assert weed is not None, "tests using S3 are marked s3, which checks for weed first"
    with seaweedfs(weed, tmp_path_factory.mktemp("seaweedfs")) as endpoint:
        yield endpoint


@pytest.fixture
def s3_storage(settings: Any, s3_endpoint: str) -> str:
    """Point the default storage at a fresh bucket on the SeaweedFS server."""
    import uuid

    bucket = f"test-{uuid.uuid4().hex[:12]}"
    s3_client(s3_endpoint).create_bucket(Bucket=bucket)
    settings.STORAGES = {
        **django_settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": bucket,
                "endpoint_url": s3_endpoint,
                "region_name": "us-east-1",
                "access_key": "test",
                "secret_key": "test",
                "default_acl": None,
                "querystring_auth": True,
                "querystring_expire": 60,
                "addressing_style": "path",
                "signature_version": "s3v4",
                "file_overwrite": True,
            },
        },
    }
    return bucket


@pytest.fixture
def fake_openai(settings: Any) -> Any:
    """Start a fake OpenAI server (options as FakeOpenAI's) that judges may call: it runs on
    127.0.0.1, so its host:port is added to JUDGE_ALLOWED_HOSTS, as an operator would allow a
    local vLLM; a worker started afterwards by worker_on gets the same setting."""

    @contextmanager
    def start(**options: Any) -> Iterator[FakeOpenAI]:
        with FakeOpenAI(**options) as server:
            settings.JUDGE_ALLOWED_HOSTS = [*settings.JUDGE_ALLOWED_HOSTS, server.host_port]
            yield server

    return start


@contextmanager
def worker_on(
    broker_url: str,
    extra_env: dict[str, str] | None = None,
    *,
    beat: bool = False,
    concurrency: int = 2,
) -> Iterator[Any]:
    """A real Celery worker process on the given broker, sharing this test's database (with
    ``beat``, running the periodic job sweep too)."""
    from django.db import connection

    from mmooc_site.celery import app

    env = {
        "DATABASE_URL": database_url(connection.settings_dict),
        "MEDIA_ROOT": str(django_settings.MEDIA_ROOT),
        "CELERY_BROKER_URL": broker_url,
        "JUDGE_ALLOWED_HOSTS": ",".join(django_settings.JUDGE_ALLOWED_HOSTS),
        **(extra_env or {}),
    }
    app.conf.task_always_eager = False
    try:
        with celery_worker(env, beat=beat, concurrency=concurrency) as process:
            yield process
    finally:
        app.conf.task_always_eager = True


@contextmanager
def site_broker(url: str) -> Iterator[None]:
    """Point this process's Celery app (the web side) at another broker for the block."""
    from mmooc_site.celery import app

    saved = app.conf.broker_url
    broker_point(app, url)
    try:
        yield
    finally:
        broker_point(app, saved)


def broker_point(app: Any, url: str, options: dict[str, Any] | None = None) -> None:
    """Point a Celery app at a broker URL (and transport options), dropping its pooled
    connections so that the next message goes to the new broker."""
    app.conf.broker_url = url
    if options is not None:
        app.conf.broker_transport_options = options
    app._pool = app.amqp._producer_pool = None


@pytest.fixture
def live_worker(transactional_db: None) -> Iterator[Any]:
    """A real Celery worker process on Redis, sharing this test's PostgreSQL database."""
    with worker_on(os.environ["REDIS_URL"]) as process:
        yield process
