"""What the benches share: latency percentiles, a fresh database, the production environment,
a keep-alive JSON client, threads released together."""

from __future__ import annotations

import http.client
import json
import os
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg


def percentiles(latencies: list[float]) -> dict[str, float]:
    if len(latencies) < 2:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0}
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "p50_ms": round(cuts[49] * 1000, 2),
        "p95_ms": round(cuts[94] * 1000, 2),
        "p99_ms": round(cuts[98] * 1000, 2),
    }


def make_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def ensure_database(url: str) -> None:
    """Create the PostgreSQL database named by ``url`` if it does not exist yet."""
    base, _, name = url.rpartition("/")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def production_env(*, database_url: str, var_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a bench's site processes: this one's, with the site configured as
    production runs it (DEBUG off, persistent connections) but on plain HTTP on loopback, since
    no TLS proxy stands in front, and with Redis as its cache and broker as in the README's
    production shape (``REDIS_URL``, else the local server's database 0: without it the API
    throttle would count calls in the database cache table); ``extra`` adds or overrides
    variables."""
    return {
        **os.environ,
        "REDIS_URL": os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0",
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
        "SECRET_KEY": "bench-only-" + "x" * 40,
        "DEBUG": "0",
        "SECURE_SSL_REDIRECT": "0",
        "CONN_MAX_AGE": "600",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "VAR_DIR": str(var_dir),
        "LOG_LEVEL": "ERROR",
        **extra,
    }


class Http:
    """One keep-alive connection; JSON in and out."""

    def __init__(self, port: int, headers: dict[str, str] | None = None) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Content-Type": "application/json", "Host": "127.0.0.1", **(headers or {})}

    def send(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        payload = None if body is None else json.dumps(body)
        for attempt in (1, 2):
            try:
                self.conn.request(method, path, body=payload, headers=self.headers)
                response = self.conn.getresponse()
                return response.status, response.read()
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()  # the server closed an idle keep-alive: reconnect once
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def run_together(
    run: Callable[[int], None],
    n: int,
    seconds: float,
    deadline: list[float],
    barrier: threading.Barrier,
) -> float:
    """Start ``n`` threads of ``run``, set the deadline ``seconds`` ahead and release them
    at once through ``barrier``; the wall-clock seconds until the last one ends."""
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    deadline[0] = time.perf_counter() + seconds
    start = time.perf_counter()
    barrier.wait()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def floor_phase(port: int, clients: int, seconds: float) -> Any:
    """Requests per second for a view that does nothing: the web stack's own ceiling."""
    counts = [0] * clients
    latencies: list[list[float]] = [[] for _ in range(clients)]
    barrier = threading.Barrier(clients + 1)
    deadline: list[float] = [0.0]

    def run(index: int) -> None:
        http = Http(port)
        barrier.wait()
        while time.perf_counter() < deadline[0]:
            t0 = time.perf_counter()
            code, _body = http.send("GET", "/healthz/")
            latencies[index].append(time.perf_counter() - t0)
            counts[index] += code == 200

    elapsed = run_together(run, clients, seconds, deadline, barrier)
    flat = [x for per in latencies for x in per]
    return {"requests": sum(counts), "seconds": round(elapsed, 2), "latencies": flat}
