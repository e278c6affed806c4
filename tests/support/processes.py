"""Real helper processes for tests: a SeaweedFS S3 server, Celery workers, a Redis server."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]


def database_url(db: dict[str, Any], name: str | None = None) -> str:
    """The URL of a Django database's settings (``connection.settings_dict``), for another
    process; a Unix socket's folder as its host is percent-encoded, as the settings read it."""
    host = quote(str(db["HOST"] or ""), safe="")
    port = f":{db['PORT']}" if db["PORT"] else ""
    password = quote(str(db["PASSWORD"] or ""), safe="")
    return f"postgres://{db['USER']}:{password}@{host}{port}/{name or db['NAME']}"


def run_python(
    code: str, env: dict[str, str], *, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code`` in the project's folder with exactly ``env`` (not checked)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def s3_client(endpoint: str) -> Any:
    """A boto3 S3 client of the test SeaweedFS server at ``endpoint``."""
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(condition: Callable[[], bool], *, timeout: float, what: str) -> None:
    """Poll a condition until it holds; fail with a readable message when it never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise TimeoutError(f"gave up waiting for {what} after {timeout:.0f} s")


class SeaweedServer:
    """A SeaweedFS server with an S3 endpoint on free ports, which a test may stop and start
    again on the same ports and folder (its data kept)."""

    def __init__(self, weed: str, workdir: Path) -> None:
        self.weed, self.workdir = weed, workdir
        self.ports = {name: free_port() for name in ("s3", "master", "volume", "filer")}
        self.grpc = {name: free_port() for name in ("master", "volume", "filer", "s3")}
        self.endpoint = f"http://127.0.0.1:{self.ports['s3']}"
        self.process: subprocess.Popen[bytes] | None = None
        workdir.mkdir(parents=True, exist_ok=True)
        # With an identity configured, SeaweedFS refuses anonymous requests, as a real
        # bucket does.
        self.config = workdir / "s3.json"
        self.config.write_text(
            json.dumps(
                {
                    "identities": [
                        {
                            "name": "tests",
                            "credentials": [{"accessKey": "test", "secretKey": "test"}],
                            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                        }
                    ]
                }
            )
        )

    def start(self) -> None:
        log = open(self.workdir / "weed.log", "ab")  # noqa: SIM115 - the process keeps it
        ports, grpc = self.ports, self.grpc
        self.process = subprocess.Popen(
            [
                self.weed,
                "server",
                f"-dir={self.workdir}",
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                f"-master.port={ports['master']}",
                f"-volume.port={ports['volume']}",
                f"-filer.port={ports['filer']}",
                "-filer",
                "-s3",
                f"-s3.port={ports['s3']}",
                f"-s3.config={self.config}",
                "-master.volumeSizeLimitMB=64",
                # The default of 8 volumes fills up after two buckets (one bucket per test).
                "-volume.max=0",
                # Listeners nobody here uses, on fixed default ports two servers would fight
                # over; and no telemetry: the machine has no network.
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
                "-master.telemetry=false",
                f"-master.port.grpc={grpc['master']}",
                f"-volume.port.grpc={grpc['volume']}",
                f"-filer.port.grpc={grpc['filer']}",
                f"-s3.port.grpc={grpc['s3']}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        client = s3_client(self.endpoint)
        process = self.process

        def ready() -> bool:
            if process.poll() is not None:
                raise RuntimeError((self.workdir / "weed.log").read_text()[-2000:])
            try:
                client.list_buckets()
                return True
            except Exception:
                return False

        wait_until(ready, timeout=60, what="SeaweedFS's S3 endpoint")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


@contextmanager
def seaweedfs(weed: str, workdir: Path) -> Iterator[str]:
    """A SeaweedFS server with an S3 endpoint on free ports; yields the endpoint URL."""
    server = SeaweedServer(weed, workdir)
    try:
        server.start()
        yield server.endpoint
    finally:
        server.stop()


def celery_worker_options(queue: str, *, concurrency: int = 2) -> list[str]:
    """The command line after ``celery`` of a prefork worker consuming ``queue`` (and its
    sweeps' queue) with ``concurrency`` pool processes."""
    return [
        "-A",
        "mmooc_site",
        "worker",
        "-l",
        "info",
        "-Q",
        f"{queue},{queue}.sweeps",  # the jobs' queue and the sweeps' (settings)
        "-c",
        str(concurrency),
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "-n",
        f"test-{queue}@%h",
    ]


@contextmanager
def celery_worker(
    env: dict[str, str], *, concurrency: int = 2, beat: bool = False
) -> Iterator[subprocess.Popen[bytes]]:
    """A real Celery worker process (prefork) consuming this test run's queue; with ``beat``,
    it also runs Celery beat (the periodic job sweep), as ``dev.py run`` does."""
    full_env = {**os.environ, **env, "CELERY_TASK_ALWAYS_EAGER": "0"}
    queue = full_env["CELERY_QUEUE"]
    log_path = Path(full_env.get("VAR_DIR", "/tmp")) / f"worker-{queue}-{free_port()}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "wb")  # noqa: SIM115 - closed below
    options = celery_worker_options(queue, concurrency=concurrency)
    if beat:
        options += ["-B", "-s", str(log_path.with_suffix(".beat"))]
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", *options],
        cwd=ROOT,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_until(
            lambda: b"ready." in log_path.read_bytes() or process.poll() is not None,
            timeout=60,
            what="the Celery worker to start",
        )
        if process.poll() is not None:
            raise RuntimeError(log_path.read_text()[-3000:])
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def children(pid: int) -> list[int]:
    """Process ids whose parent is `pid` (the prefork pool of a Celery worker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``: its children, theirs, and so on."""
    found, todo = [], [pid]
    while todo:
        below = children(todo.pop())
        found.extend(below)
        todo.extend(below)
    return found


def kill_worker(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL a Celery worker and its pool at once, as a crash or the OOM killer would."""
    for pid in [*children(process.pid), process.pid]:
        os.kill(pid, signal.SIGKILL)
    process.wait(timeout=10)


class RedisServer:
    """A throwaway Redis server on a free port, without persistence: a restart loses every
    message it held, as a crashed broker does."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                "redis-server",
                *("--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self.workdir)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import redis

        client = redis.Redis(port=self.port, socket_connect_timeout=1)

        def ready() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        wait_until(ready, timeout=30, what=f"Redis on port {self.port}")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()
