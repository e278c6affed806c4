"""Real helper processes for tests: a SeaweedFS S3 server and a Celery worker."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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


@contextmanager
def seaweedfs(weed: str, workdir: Path) -> Iterator[str]:
    """A SeaweedFS server with an S3 endpoint on free ports; yields the endpoint URL."""
    s3, master, volume, filer = free_port(), free_port(), free_port(), free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    # With an identity configured, SeaweedFS refuses anonymous requests, as a real bucket does.
    config = workdir / "s3.json"
    config.write_text(
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
    log = open(workdir / "weed.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [
            weed,
            "server",
            f"-dir={workdir}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-master.port={master}",
            f"-volume.port={volume}",
            f"-filer.port={filer}",
            "-filer",
            "-s3",
            f"-s3.port={s3}",
            f"-s3.config={config}",
            "-master.volumeSizeLimitMB=64",
            # The default of 8 volumes fills up after two buckets (one bucket per test).
            "-volume.max=0",
            # Listeners nobody here uses, on fixed default ports two servers would fight over;
            # and no telemetry: the machine has no network.
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            "-master.telemetry=false",
            f"-master.port.grpc={free_port()}",
            f"-volume.port.grpc={free_port()}",
            f"-filer.port.grpc={free_port()}",
            f"-s3.port.grpc={free_port()}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    endpoint = f"http://127.0.0.1:{s3}"
    try:
        import boto3

        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="us-east-1",
        )

        def ready() -> bool:
            if process.poll() is not None:
                raise RuntimeError((workdir / "weed.log").read_text()[-2000:])
            try:
                client.list_buckets()
                return True
            except Exception:
                return False

        wait_until(ready, timeout=60, what="SeaweedFS's S3 endpoint")
        yield endpoint
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@contextmanager
def celery_worker(
    env: dict[str, str], *, concurrency: int = 2
) -> Iterator[subprocess.Popen[bytes]]:
    """A real Celery worker process (prefork) consuming this test run's queue."""
    full_env = {**os.environ, **env, "CELERY_TASK_ALWAYS_EAGER": "0"}
    queue = full_env["CELERY_QUEUE"]
    log_path = Path(full_env.get("VAR_DIR", "/tmp")) / f"worker-{queue}-{free_port()}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "mmooc_site",
            "worker",
            "-l",
            "info",
            "-Q",
            queue,
            "-c",
            str(concurrency),
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"test-{queue}@%h",
        ],
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
