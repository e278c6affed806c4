"""The supervised production shape (deploy/supervisord.conf): supervisord runs the launcher
(mmooc_site/launch.py), which forks the web processes and the Celery worker (beat a thread of
it) from one loaded process; the launcher starts again, within seconds, either program that
exits, and supervisord the launcher (here each SIGKILLed with its children, as a crash or the
OOM killer would); a job created while the worker is down ends once it is back, and one whose
message was never sent ends too (only beat's sweep sends it)."""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
import xmlrpc.client
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection

from annotation.imports import services as import_services
from annotation.models import ImportJob, JobStatus, Sample
from core.jobs import NEVER_SENT
from tests.annotation.imports_support import b64, dataset_for, image, mmooc_record, write_lines
from tests.conftest import site_broker
from tests.support.processes import ROOT, RedisServer, descendants, free_port, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

CONFIG = ROOT / "deploy" / "supervisord.conf"
RESTART_WITHIN = 10.0  # seconds, from the kill to the program running again


class Supervised:
    """supervisord on deploy/supervisord.conf, with its XML-RPC interface (supervisor's
    documented API, on the unix socket the configuration names)."""

    def __init__(self, var_dir: Path, env: dict[str, str]) -> None:
        self.var_dir = var_dir
        self.process = subprocess.Popen(
            [str(Path(sys.executable).parent / "supervisord"), "-c", str(CONFIG)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def info(self, name: str) -> dict[str, Any]:
        """supervisord's view of one program (a connection of its own per call)."""
        from supervisor.xmlrpc import SupervisorTransport

        socket = f"unix://{self.var_dir / 'supervisor.sock'}"
        rpc: Any = xmlrpc.client.ServerProxy(
            "http://localhost", transport=SupervisorTransport(None, None, socket)
        )
        return dict(rpc.supervisor.getProcessInfo(name))

    def running(self, name: str) -> int | None:
        """The program's pid while supervisord has it RUNNING, else None."""
        try:
            info = self.info(name)
        except (OSError, http.client.HTTPException, xmlrpc.client.Fault):
            return None
        return int(info["pid"]) if info["statename"] == "RUNNING" else None

    def log(self, name: str) -> str:
        path = self.var_dir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def _crash(pid: int) -> None:
    """SIGKILL a process and every process below it at once."""
    for victim in [*descendants(pid), pid]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(victim, signal.SIGKILL)


def _program(shape: Supervised, name: str) -> int | None:
    """The pid of the launcher's latest ``web`` or ``worker`` while it lives (its log says
    "NAME started (pid N)"), or of the launcher itself (``site``) while supervisord runs it."""
    if name == "site":
        return shape.running("site")
    started = re.findall(rf"{name} started \(pid (\d+)\)", shape.log("site"))
    if not started:
        return None
    pid = int(started[-1])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    return pid


def _import_ended(pk: int) -> bool:
    return ImportJob.objects.get(pk=pk).status not in (JobStatus.QUEUED, JobStatus.RUNNING)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.fixture
def supervised(transactional_db: None, tmp_path: Path) -> Iterator[tuple[Supervised, str]]:
    """The shape on this test's database and a Redis of its own; yields it and the web's
    address."""
    db = connection.settings_dict
    var_dir = tmp_path / "var"
    var_dir.mkdir()
    port = free_port()
    with RedisServer(tmp_path / "redis") as redis_server, site_broker(redis_server.url):
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
            "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
            "DATABASE_URL": (
                f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT']}/"
                f"{db['NAME']}"
            ),
            "REDIS_URL": redis_server.url,
            "CELERY_BROKER_URL": redis_server.url,
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "VAR_DIR": str(var_dir),
            "MEDIA_ROOT": str(django_settings.MEDIA_ROOT),
            "SECRET_KEY": "supervised-test-" + "x" * 40,
            "DEBUG": "0",
            "SECURE_SSL_REDIRECT": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "GUNICORN_CMD_ARGS": f"--bind 127.0.0.1:{port}",
            "JOB_SWEEP_SECONDS": "1",
            "LOG_LEVEL": "INFO",
        }
        shape = Supervised(var_dir, env)
        try:
            wait_until(
                lambda: shape.running("site") is not None,
                timeout=60,
                what="supervisord to run the launcher",
            )
            wait_until(
                lambda: _answers(f"http://127.0.0.1:{port}/livez/"), timeout=60, what="the web"
            )
            wait_until(lambda: "ready." in shape.log("site"), timeout=60, what="the worker")
            yield shape, f"http://127.0.0.1:{port}"
        finally:
            shape.stop()


def test_a_killed_launcher_worker_or_web_is_running_again_within_ten_seconds(
    supervised: tuple[Supervised, str], tmp_path: Path
) -> None:
    """The launcher with everything below it, then the worker's main process and then the
    gunicorn master, each SIGKILLed with the processes below it, run again under a new pid
    within 10 s; the web answers again, an import created while the worker was down ends once
    it is back, and an import whose task was never sent ends too: beat's sweep (in the new
    worker) sends it."""
    shape, web = supervised
    picture = b64(image(1))
    source = write_lines(
        tmp_path / "rows.jsonl", [mmooc_record(n, image=picture) for n in range(20)]
    )
    dataset = dataset_for("mmooc", "mmooc")
    from mmooc_site.celery import app

    app.conf.task_always_eager = False
    try:
        for name in ("site", "worker", "web"):
            wait_until(
                lambda name=name: _program(shape, name) is not None,  # type: ignore[misc]
                timeout=60,
                what=f"{name} to run",
            )
            pid = _program(shape, name)
            assert pid is not None
            killed_at = time.monotonic()
            _crash(pid)
            if name == "worker":
                job = import_services.import_job_create(
                    dataset=dataset,
                    format="mmooc",
                    source_kind="server_path",
                    source=str(source),
                    trusted=True,
                )
            wait_until(
                lambda name=name, pid=pid: _program(shape, name) not in (None, pid),  # type: ignore[misc]
                timeout=RESTART_WITHIN * 3,
                what=f"{name} to start again",
            )
            restarted = time.monotonic() - killed_at
            assert restarted < RESTART_WITHIN, name
            print(f"\n{name} running again {restarted:.1f} s after the kill")
        wait_until(lambda: _answers(f"{web}/livez/"), timeout=60, what="the web again")
        unsent = import_services.import_job_create(
            dataset=dataset_for("mmooc", "mmooc"),
            format="mmooc",
            source_kind="server_path",
            source=str(source),
            trusted=True,
            queue=False,
        )
        ImportJob.objects.filter(pk=unsent.pk).update(queued_at=NEVER_SENT)
        for pending in (job, unsent):
            wait_until(
                partial(_import_ended, pending.pk),
                timeout=120,
                what=f"the import {pending.pk} to end",
            )
    finally:
        app.conf.task_always_eager = True
    for ended in (job, unsent):
        ended.refresh_from_db()
        assert ended.status == JobStatus.SUCCEEDED, ended.message
        assert Sample.objects.filter(dataset=ended.dataset).count() == 20
