"""Background work in real worker processes: Redis in production, a filesystem broker locally."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction
from kombu import Connection

from annotation import services
from annotation.models import MediaAsset
from mmooc_site.celery import app
from tests.annotation.factories import png_bytes, wav_bytes
from tests.conftest import broker_point, worker_on
from tests.support.processes import wait_until


def _store_assets(n: int) -> list[int]:
    ids = []
    for i in range(n):
        with transaction.atomic():  # committed one by one: each queues its task on commit
            data = png_bytes(32, 32, (i % 256, i // 256, 9)) if i % 5 else wav_bytes(freq=200 + i)
            kind = "image" if i % 5 else "audio"
            ids.append(services.media_asset_store(data=data, kind=kind).pk)
    return ids


def _all_derived(ids: list[int]) -> bool:
    return MediaAsset.objects.filter(pk__in=ids, derived_at__isnull=False).count() == len(ids)


@pytest.mark.postgres
@pytest.mark.redis
def test_a_real_worker_derives_media_end_to_end_on_redis(live_worker: Any) -> None:
    """A task queued on commit travels through Redis to a worker process that does the work."""
    assert not app.conf.task_always_eager
    ids = _store_assets(3)
    wait_until(lambda: _all_derived(ids), timeout=60, what="the worker to derive 3 assets")
    image = MediaAsset.objects.get(pk=ids[1])
    assert image.thumbnail and image.derive_error == ""
    log = Path(settings.VAR_DIR).glob("worker-*.log")
    assert any("annotation.derive_media_asset" in p.read_text() for p in log)


def test_a_pool_process_is_replaced_after_a_task_past_the_memory_limit_by_default() -> None:
    """Celery's worker_max_memory_per_child comes from the settings: 250,000 KiB unless
    CELERY_WORKER_MAX_MEMORY_PER_CHILD says otherwise."""
    assert app.conf.worker_max_memory_per_child == settings.CELERY_WORKER_MAX_MEMORY_PER_CHILD
    assert settings.CELERY_WORKER_MAX_MEMORY_PER_CHILD == 250_000


@pytest.mark.postgres
def test_the_filesystem_broker_loses_no_message_between_two_worker_processes(
    transactional_db: None, tmp_path: Path
) -> None:
    """Without Redis, the patched filesystem broker delivers every one of 60 tasks."""
    folder = tmp_path / "broker"
    for sub in ("queue", "processed", "control"):
        (folder / sub).mkdir(parents=True)
    options = {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }
    saved = app.conf.broker_url, app.conf.broker_transport_options
    broker_point(app, "filesystem://localhost//", options)
    try:
        with worker_on("filesystem://localhost//", {"CELERY_BROKER_FOLDER": str(folder)}):
            ids = _store_assets(60)
            wait_until(lambda: _all_derived(ids), timeout=120, what="60 derived assets")
    finally:
        broker_point(app, *saved)


def test_production_refuses_to_start_without_a_secret_key(tmp_path: Path) -> None:
    """With DEBUG off and no SECRET_KEY, the settings refuse to load, saying why."""
    env = {
        "PATH": "/usr/bin:/bin",
        "DEBUG": "0",
        "VAR_DIR": str(tmp_path),
        "DATABASE_URL": os.environ["DATABASE_URL"],
    }
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; "
            "os.environ['DJANGO_SETTINGS_MODULE'] = 'mmooc_site.settings.production'; "
            "django.setup()",
        ],
        env=env,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_filesystem_messages_are_never_visible_half_written(tmp_path: Path) -> None:
    """The patched transport writes each message under a hidden name, then renames it."""
    folder = tmp_path / "b"
    for sub in ("q", "p", "c"):
        (folder / sub).mkdir(parents=True)
    options = {
        "data_folder_in": str(folder / "q"),
        "data_folder_out": str(folder / "q"),
        "processed_folder": str(folder / "p"),
        "control_folder": str(folder / "c"),
    }
    with Connection("filesystem://localhost//", transport_options=options) as conn:
        queue = conn.SimpleQueue("atomic")
        for i in range(20):
            queue.put({"n": i})
        names = sorted(p.name for p in (folder / "q").iterdir())
        assert len(names) == 20 and not any(n.startswith(".") for n in names)
        assert all((folder / "q" / n).stat().st_size > 0 for n in names)
        got = sorted(queue.get(timeout=1).payload["n"] for _ in range(20))
        assert got == list(range(20))
        queue.close()
