"""Jobs outlive a PostgreSQL restart, and the web answers 503 (not 500) while it is away.

The whole site runs on a PostgreSQL server of this test's own (tests/support/postgres.py):
a real gunicorn web process and a Celery worker with beat. An import (past its first chunk),
a judge job and a snapshot are started through the API and held mid-way by a lock another
session takes on the tables they write next; the server is then stopped (every session cut,
the lock's too), asked over HTTP while it is down, and started again. Each job ends within
two minutes, with every row exactly once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from annotation.imports.pipeline import CHUNK_ROWS
from tests.support import postgres
from tests.support.processes import (
    ROOT,
    RedisServer,
    celery_worker,
    free_port,
    run_python,
    wait_until,
)

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.skipif(postgres.available() is not None, reason=str(postgres.available())),
]

DEADLINE = 120  # seconds after the server is back
# Enough rows, each with its own image, that the import is still running when the lock is
# granted on a loaded machine (with 4 chunks of one shared image it had sometimes ended).
ROWS = CHUNK_ROWS * 8

# Run in a process on the test's own database: the data the jobs work on, and a lead's token.
SETUP = """
import json
import django
django.setup()
from accounts.services import api_token_create
from core import roles
from tests.annotation.factories import UserFactory
from tests.annotation.imports_support import dataset_for
from tests.judging.factories import bulk_responses, bulk_samples, rule_judge
lead = UserFactory.create(role=roles.LEAD)
imported = dataset_for("mmooc", "mmooc", name="imported")
judged = dataset_for("mmooc", "mmooc", name="judged")
bulk_responses(bulk_samples(judged, 400), ["m1", "m2"])
rule_judge()
print(json.dumps({"token": api_token_create(user=lead).key, "imported": imported.pk,
                  "judged": judged.pk}))
"""


def _env(database_url: str, redis_url: str, var_dir: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": redis_url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "SECRET_KEY": "pg-restart-test-" + "x" * 40,
        "DEBUG": "0",
        "SECURE_SSL_REDIRECT": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "VAR_DIR": str(var_dir),
        "MEDIA_ROOT": str(var_dir / "media"),
        "CONN_MAX_AGE": "600",
        "LOG_LEVEL": "WARNING",
        **extra,
    }


class Site:
    """The web process's address and a lead's token."""

    def __init__(self, base: str, token: str) -> None:
        self.base, self.token = base, token

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            text = error.read()
            try:
                return error.code, json.loads(text)
            except ValueError:
                return error.code, text.decode(errors="replace")


@pytest.fixture
def own_postgres() -> Iterator[postgres.PostgresServer]:
    server = postgres.PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.close()


def _rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, connect_timeout=5) as conn:
        return list(conn.execute(sql, params).fetchall())


def _waiting_on(url: str, table: str) -> bool:
    return bool(
        _rows(
            url,
            "SELECT count(*) FROM pg_locks WHERE relation = %s::regclass AND NOT granted",
            table,
        )[0][0]
    )


def test_an_import_a_judge_job_and_a_snapshot_end_after_postgresql_restarts(
    own_postgres: postgres.PostgresServer, tmp_path: Path
) -> None:
    """Each job is held mid-way when the server stops; while it is down the API, a page and
    /healthz/ answer 503 (with Retry-After), never 500; once it is back every job ends
    within two minutes, the import with each row once, the judge job with one verdict per
    response, the snapshot with every entry once."""
    from tests.annotation.imports_support import mmooc_record, write_lines

    database = own_postgres.create_database("site")
    var_dir = tmp_path / "var"
    var_dir.mkdir()
    source_dir = tmp_path / "sources"
    source = write_lines(source_dir / "rows.jsonl", [mmooc_record(n) for n in range(ROWS)])
    with RedisServer(tmp_path / "redis") as redis_server:
        env = _env(
            database,
            redis_server.url,
            var_dir,
            IMPORT_SERVER_ROOTS=str(source_dir),
            JOB_SWEEP_SECONDS="1",
            CELERY_QUEUE="pg-restart",
        )
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert migrate.returncode == 0, migrate.stderr
        made = run_python(SETUP, env, timeout=120)
        assert made.returncode == 0, made.stderr
        ids = json.loads(made.stdout.strip().splitlines()[-1])
        port = free_port()
        web_log = open(var_dir / "web.log", "wb")  # noqa: SIM115 - closed below
        web = subprocess.Popen(
            [
                *(sys.executable, "-m", "gunicorn", "mmooc_site.wsgi", "--preload"),
                *("-w", "2", "-k", "gthread", "--threads", "4"),
                *("--bind", f"127.0.0.1:{port}", "--control-socket", str(var_dir / "g.ctl")),
            ],
            cwd=ROOT,
            env=env,
            stdout=web_log,
            stderr=subprocess.STDOUT,
        )
        try:
            site = Site(f"http://127.0.0.1:{port}", ids["token"])
            wait_until(lambda: _answers(site), timeout=60, what="the web process")
            with celery_worker(env, beat=True, concurrency=4):
                _restart_during_jobs(own_postgres, database, site, ids, str(source))
        finally:
            web.terminate()
            web.wait(timeout=30)
            web_log.close()


def _answers(site: Site) -> bool:
    try:
        return site.call("GET", "/api/me/")[0] == 200
    except OSError:
        return False


def _restart_during_jobs(
    server: postgres.PostgresServer, database: str, site: Site, ids: dict[str, Any], source: str
) -> None:
    locker = psycopg.connect(database)  # its session ends with the server's stop
    try:
        locker.execute("LOCK TABLE annotation_snapshotentry, judging_verdict IN EXCLUSIVE MODE")
        status, imported = site.call(
            "POST",
            f"/api/datasets/{ids['imported']}/imports/",
            {"format": "mmooc", "source_kind": "server_path", "location": source},
        )
        assert status == 202, imported
        status, snapshot = site.call(
            "POST",
            f"/api/datasets/{ids['judged']}/snapshots/",
            {"name": "v1", "format": "jsonl", "statuses": ["pending_review"]},
        )
        assert status == 202, snapshot
        status, judged = site.call(
            "POST",
            f"/api/datasets/{ids['judged']}/judge-jobs/",
            {"task": "scoring", "judges": ["rule"]},
        )
        assert status == 202, judged
        wait_until(
            lambda: (
                _rows(database, "SELECT rows_done FROM annotation_importjob")[0][0] >= CHUNK_ROWS
            ),
            timeout=60,
            what="the import's first chunk",
        )
        locker.execute("LOCK TABLE annotation_sample IN EXCLUSIVE MODE")
        ((held_at,),) = _rows(database, "SELECT rows_done FROM annotation_importjob")
        assert held_at < ROWS, "the import ended before it could be held mid-way"
        for table in ("annotation_sample", "annotation_snapshotentry", "judging_verdict"):
            wait_until(
                lambda table=table: _waiting_on(database, table),  # type: ignore[misc]
                timeout=60,
                what=f"a job waiting on {table}",
            )
        server.stop()  # cuts every session, the locker's too
    finally:
        locker.close()
    try:
        codes = {
            "api": site.call("GET", "/api/me/"),
            "start": site.call(
                "POST",
                f"/api/datasets/{ids['judged']}/snapshots/",
                {"name": "v2", "format": "jsonl", "statuses": ["pending_review"]},
            ),
            "health": site.call("GET", "/healthz/"),
        }
    finally:
        server.start()
    back_at = time.monotonic()
    assert {name: code for name, (code, _body) in codes.items()} == {
        "api": 503,
        "start": 503,
        "health": 503,
    }, codes
    assert "database" in str(codes["api"][1])

    def ended() -> bool:
        states = _rows(
            database,
            "SELECT status FROM annotation_importjob UNION ALL "
            "SELECT status FROM annotation_snapshot UNION ALL SELECT status FROM judging_judgejob",
        )
        return all(state in ("succeeded", "failed", "cancelled") for (state,) in states)

    wait_until(ended, timeout=DEADLINE, what="every job to end after the restart")
    print(f"\nevery job ended {time.monotonic() - back_at:.0f} s after PostgreSQL was back")
    ((status, rows_done, imported_count, message),) = _rows(
        database, "SELECT status, rows_done, imported, message FROM annotation_importjob"
    )
    assert (status, rows_done, imported_count) == ("succeeded", ROWS, ROWS), message
    assert _rows(
        database,
        "SELECT count(*), count(DISTINCT external_id) FROM annotation_sample WHERE dataset_id = %s",
        ids["imported"],
    ) == [(ROWS, ROWS)]
    snapshots = _rows(
        database,
        "SELECT s.status, s.done, count(e.id), count(DISTINCT e.sample_id), s.message "
        "FROM annotation_snapshot s LEFT JOIN annotation_snapshotentry e ON e.snapshot_id = s.id "
        "GROUP BY s.id",
    )
    assert [row[:4] for row in snapshots] == [("succeeded", 400, 400, 400)], snapshots
    ((job_status, job_message),) = _rows(database, "SELECT status, message FROM judging_judgejob")
    assert job_status == "succeeded", job_message
    assert _rows(database, "SELECT count(*), count(DISTINCT response_id) FROM judging_verdict") == [
        (800, 800)
    ]
