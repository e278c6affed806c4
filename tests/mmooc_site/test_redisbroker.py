"""The site's Redis transport (mmooc_site/redisbroker.py) keeps a worker alive when Redis drops
while the worker holds an unacknowledged message, where kombu's own transport makes it exit.

Both run the same probe worker (tests/support/celery_probe.py: late acks, two pool processes)
on a Redis of the test's own: one task is running (its message unacknowledged) and the
consumer waits on BRPOP for the next when Redis is killed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import broker_point
from tests.support.celery_probe import app as probe_app
from tests.support.celery_probe import hold
from tests.support.processes import ROOT, RedisServer, wait_until

pytestmark = pytest.mark.redis

CRASH = "Unrecoverable error: AttributeError(\"'NoneType' object has no attribute 'hostname'\")"


@contextmanager
def probe_worker(folder: Path, broker: str, transport: str) -> Iterator[subprocess.Popen[bytes]]:
    """The probe's Celery worker (prefork, two processes) on ``broker``; its log in
    ``folder/worker.log``."""
    folder.mkdir(parents=True, exist_ok=True)
    log_path = folder / "worker.log"
    env = {
        # Without Django: Celery's Django fix-up would load the site (and its transport).
        **{k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
        "PROBE_BROKER": broker,
        "PROBE_TRANSPORT": transport,
        "PROBE_DIR": str(folder),
    }
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                *("-m", "celery", "-A", "tests.support.celery_probe", "worker"),
                *("-l", "info", "-c", "2", "-Q", "probe", "-n", f"probe-{transport}@%h"),
                *("--without-gossip", "--without-mingle", "--without-heartbeat"),
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_until(
                lambda: b"ready." in log_path.read_bytes() or process.poll() is not None,
                timeout=60,
                what="the probe worker to start",
            )
            assert process.poll() is None, log_path.read_text()[-3000:]
            yield process
        finally:
            for release in folder.glob("*.started"):
                release.with_suffix(".release").touch()
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def _log(folder: Path) -> str:
    return (folder / "worker.log").read_text(errors="replace")


def _running(folder: Path, name: str) -> None:
    """Send a held task and wait until a pool process runs it."""
    hold.delay(name)
    wait_until(
        lambda: (folder / f"{name}.started").exists(), timeout=60, what=f"the task {name} to run"
    )


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    saved = probe_app.conf.broker_url
    with RedisServer(tmp_path / "redis") as server:
        broker_point(probe_app, server.url)
        try:
            yield server
        finally:
            broker_point(probe_app, saved)


def test_kombus_own_transport_exits_when_redis_drops_with_a_message_unacknowledged(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """The upstream bug the site's transport works around (kombu 5.7.0): Redis killed while a
    task runs and the consumer waits for more, the worker logs the unrecoverable
    AttributeError and exits once its task ends. (When a kombu release fixes it, this test
    fails: then the site's transport can go.)"""
    folder = tmp_path / "stock"
    with probe_worker(folder, redis_server.url, "kombu") as worker:
        _running(folder, "a")
        redis_server.kill()
        wait_until(lambda: CRASH in _log(folder), timeout=60, what="the worker's crash")
        (folder / "a.release").touch()
        worker.wait(timeout=60)
        assert worker.returncode != 0


def test_the_sites_transport_keeps_the_worker_through_five_redis_restarts(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """The same outage five times over with the site's transport: the worker stays up,
    reconnects each time Redis is back, and runs the next task sent."""
    folder = tmp_path / "site"
    with probe_worker(folder, redis_server.url, "site") as worker:
        for n in range(5):
            name = f"t{n}"
            _running(folder, name)
            lost = _log(folder).count("Connection to broker lost")
            redis_server.kill()
            wait_until(
                lambda lost=lost: _log(folder).count("Connection to broker lost") > lost,  # type: ignore[misc]
                timeout=60,
                what="the worker to see Redis go",
            )
            redis_server.start()
            (folder / f"{name}.release").touch()
            wait_until(
                lambda name=name: (folder / f"{name}.done").exists(),  # type: ignore[misc]
                timeout=60,
                what=f"the task {name} to end",
            )
            assert worker.poll() is None, _log(folder)[-3000:]
        (folder / "last.release").touch()
        _running(folder, "last")
        wait_until(lambda: (folder / "last.done").exists(), timeout=60, what="the last task")
        assert worker.poll() is None
        log = _log(folder)
        assert "Unrecoverable error" not in log and log.count("Connection to broker lost") == 5
