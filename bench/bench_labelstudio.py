"""Side by side with Label Studio 1.23.2 on this machine: the 41,883-row MMOOC import and the
memory of each site at rest, in alternating rounds (Label Studio first in even rounds, this site
first in odd ones), so that a change of the machine's load falls on both.

Label Studio runs from a virtualenv of its own, outside the repository (never the project's)::

    python3 -m venv /work/ls-venv && /work/ls-venv/bin/pip install label-studio==1.23.2

Run (local PostgreSQL and Redis)::

    .venv/bin/python bench/bench_labelstudio.py [--ls /work/ls-venv/bin/label-studio]
        [--rounds 3] [--rows 41883] [--ls-db postgres|sqlite] [--pg postgres://postgres@127.0.0.1:5432]
        [--db bench_labelstudio] [--redis redis://127.0.0.1:6379/0] [--port 8781]
    .venv/bin/python bench/bench_labelstudio.py --ours-only [--rows 30 --rounds 1]

Without ``--ours-only`` a missing Label Studio executable stops the bench (exit status 2)
before anything runs: its figures are never left out silently. ``--ours-only`` measures this
site's side alone and says so (``"ours_only": true``, every Label Studio figure null); the
benches' smoke test runs it so (CI has no Label Studio).

Each round measures:

- **Label Studio**: ``label-studio start`` (Django's ``runserver``, one process: Label
  Studio's own way of running from the package; the Community edition imports in the request,
  with no worker) on a data folder of its own under the temporary folder, copied from one
  ``label-studio init`` made at the bench's start (a user with a legacy API token); its PSS at
  rest (its process tree, ``/proc/PID/smaps_rollup``) after start and a few ``/health/``
  requests; then a project (an image, the question, the answer and a choice) and the import of
  the rows as one JSON file through its API (``POST /api/projects/ID/import``, a multipart
  upload as its import dialog sends), timed until the response is in and
  ``GET /api/projects/ID/`` counts every task; Label Studio's own ``duration`` of the import
  (from its view's start: the upload already received) is kept beside it, and the comparison
  uses the smaller of the two. Its process's PSS after the import is reported too.
  Database: ``--ls-db postgres`` (the default) puts it on the same PostgreSQL server as this
  site, in a database of its own (cloned per round from the one ``init`` migrated), which is
  Label Studio's recommended production database: both sides then pay the same engine for
  their writes, and neither side's PSS holds its database (SQLite, Label Studio's default for
  ``label-studio start``, ``--ls-db sqlite``, runs inside its process, so its page cache
  would count in its PSS while this site's PostgreSQL backends do not).
- **this site**: ``bench/bench_import.py``'s import (``run_child``: a fresh process runs
  ``import_job_run``; every image hashed, fully decoded and checked, near-duplicates found, each
  row checked against the MMOOC taxonomy; fresh images every round), then
  ``bench/bench_memory.py``'s production shape at rest (``mmooc_site.launch`` forking gunicorn
  ``--preload -w 2 --threads 4`` master and workers + Celery main and 2 pool processes, all of
  them and the launcher summed) and the supervised
  shape as shipped (``deploy/supervisord.conf``: supervisord, the web, the worker with its beat
  thread), both booted and warmed up with ``/healthz/`` requests.

The same rows on both sides: ``bench_import.write_file``'s records (a 24×24 PNG of its own in
each, as base64), given to Label Studio as tasks whose ``image`` is that PNG as a ``data:`` URI.
Label Studio stores the task's JSON and does not open the image; this site decodes every one.

Databases: this site's ``{db}_ours`` (dropped, created and migrated at the start), Label
Studio's ``{db}_ls_template`` and ``{db}_ls`` (each round's clone). Prints one JSON object on
its last line: each round, the medians, which side is ahead on each line, ``uptime``'s load
before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import bench_import, bench_memory  # noqa: E402 - after the repository joins the path
from bench.support import make_database, production_env  # noqa: E402
from tests.support.processes import wait_until  # noqa: E402

LEAD, PASSWORD = "lead@example.org", "bench-pass-123456"
VERSION = "import label_studio; print(label_studio.__version__)"

# Label Studio's project: the fields of bench_import.write_file's records it shows.
LABEL_CONFIG = """<View>
  <Image name="image" value="$image"/>
  <Header value="$question"/>
  <Text name="answer" value="$answer"/>
  <Choices name="ooc_type" toName="image" choice="single">
    <Choice value="visual_false_premises"/>
    <Choice value="multimodal_ambiguity"/>
    <Choice value="missing_knowledge_background"/>
  </Choices>
</View>
"""


def median(values: list[float]) -> float:
    return round(float(statistics.median(values)), 2)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of a process so far."""
    return bench_import.backend_cpu_seconds(pid)


def tree_pss(root: int) -> dict[str, Any]:
    """The PSS and RSS of ``root`` and every process below it, summed (MB)."""
    tree = [root, *bench_memory.descendants(root)]
    figures = [bench_memory.memory(pid) for pid in tree]
    return {"processes": len(tree)} | {
        f"{key}_mb": round(sum(m.get(key, 0) for m in figures), 1)
        for key in ("pss", "rss", "pss_anon", "pss_file", "uss")
    }


# --- Label Studio -------------------------------------------------------------------------


class LabelStudio:
    """Label Studio's data folders and databases for this run."""

    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.executable = args.ls
        self.kind = args.ls_db
        self.admin = f"{args.pg}/postgres"
        self.pg = urlsplit(args.pg)
        self.template_db, self.round_db = f"{args.db}_ls_template", f"{args.db}_ls"
        self.template, self.folder = folder / "ls-template", folder
        self.port = args.ls_port
        self.token = secrets.token_hex(20)

    def env(self, data_dir: Path, database: str) -> dict[str, str]:
        """Label Studio's environment: only what it needs (it reads unprefixed names such as
        USERNAME, DEBUG and HOST as settings, so nothing of this process's environment)."""
        env = {
            "PATH": f"{Path(self.executable).parent}:/usr/bin:/bin",
            "HOME": str(data_dir),
            "LANG": "C.UTF-8",
            "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
            "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": "",
            "LATEST_VERSION_CHECK": "false",
            "COLLECT_ANALYTICS": "false",
            "DJANGO_DB": "sqlite",
        }
        if self.kind == "postgres":
            env |= {
                "DJANGO_DB": "default",
                "POSTGRE_NAME": database,
                "POSTGRE_USER": self.pg.username or "postgres",
                "POSTGRE_PASSWORD": self.pg.password or "",
                "POSTGRE_HOST": self.pg.hostname or "127.0.0.1",
                "POSTGRE_PORT": str(self.pg.port or 5432),
            }
        return env

    def init(self) -> None:
        """One ``label-studio init``: migrations and a lead with a legacy API token."""
        if self.kind == "postgres":
            make_database(self.admin, self.template_db)
        self.template.mkdir()
        subprocess.run(
            [
                self.executable,
                "init",
                "--quiet",
                "--no-browser",
                *("--username", LEAD, "--password", PASSWORD, "--user-token", self.token),
                "--enable-legacy-api-token",
                "--agree-fix-sqlite",
            ],
            env=self.env(self.template, self.template_db),
            cwd=self.template,
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=900,
        )

    def fresh(self, n: int) -> Path:
        """Round ``n``'s data folder (and database), copied from the initialised ones."""
        data_dir = self.folder / f"ls-round-{n}"
        shutil.copytree(self.template, data_dir)
        if self.kind == "postgres":
            with psycopg.connect(self.admin, autocommit=True) as conn:
                name = sql.Identifier(self.round_db)
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
                conn.execute(
                    sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                        name, sql.Identifier(self.template_db)
                    )
                )
        return data_dir

    @contextlib.contextmanager
    def running(self, data_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
        """``label-studio start`` on ``data_dir``, answering ``/health/``; stopped after."""
        log = open(data_dir / "server.log", "wb")  # noqa: SIM115 - closed below
        process = subprocess.Popen(
            [
                self.executable,
                "start",
                "--no-browser",
                *("--host", "127.0.0.1", "--port", str(self.port)),
            ],
            env=self.env(data_dir, self.round_db),
            cwd=data_dir,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

        def up() -> bool:
            if process.poll() is not None:
                raise SystemExit(f"label-studio exited with {process.returncode}; see {log.name}")
            try:
                return httpx.get(f"{self.url}/health/", timeout=2, trust_env=False).is_success
            except httpx.HTTPError:
                return False

        try:
            wait_until(up, timeout=300, what="Label Studio to answer /health/")
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def round(self, n: int, tasks_file: Path, rows: int) -> dict[str, Any]:
        """Start, measure at rest, import every row, count them, measure again, stop."""
        data_dir = self.fresh(n)
        load_before = os.getloadavg()[0]
        with self.running(data_dir) as process:
            with httpx.Client(base_url=self.url, timeout=30, trust_env=False) as client:
                for _ in range(5):
                    client.get("/health/").raise_for_status()
            at_rest = tree_pss(process.pid)
            headers = {"Authorization": f"Token {self.token}"}
            with httpx.Client(
                base_url=self.url, headers=headers, timeout=1800, trust_env=False
            ) as client:
                project = client.post(
                    "/api/projects/",
                    json={"title": f"mmooc-{n}", "label_config": LABEL_CONFIG},
                )
                project.raise_for_status()
                pid = project.json()["id"]
                cpu = cpu_of(process.pid)
                started = time.perf_counter()
                with open(tasks_file, "rb") as upload:
                    imported = client.post(
                        f"/api/projects/{pid}/import",
                        files={"file": (tasks_file.name, upload, "application/json")},
                    )
                imported.raise_for_status()
                counted = client.get(f"/api/projects/{pid}/").json()["task_number"]
                seconds = time.perf_counter() - started
                cpu_import = cpu_of(process.pid) - cpu
            after = tree_pss(process.pid)
        shutil.rmtree(data_dir)
        if counted != rows:
            raise SystemExit(f"Label Studio counted {counted} tasks of {rows}")
        body = imported.json()
        return {
            "tasks": counted,
            "seconds": round(seconds, 2),
            "duration_s": round(float(body["duration"]), 2),
            "process_cpu_s": round(cpu_import, 2),
            "pss_mb_at_rest": at_rest["pss_mb"],
            "at_rest": at_rest,
            "pss_mb_after_import": after["pss_mb"],
            "load_before": round(load_before, 2),
        }


def write_tasks(jsonl: Path, out: Path) -> None:
    """bench_import's records as Label Studio tasks: the PNG as a ``data:`` URI."""
    with open(jsonl, encoding="utf-8") as rows, open(out, "w", encoding="utf-8") as tasks:
        tasks.write("[")
        for n, line in enumerate(rows):
            record = json.loads(line)
            record["image"] = "data:image/png;base64," + record["image"]
            tasks.write(("," if n else "") + json.dumps({"data": record}))
        tasks.write("]")


# --- this site ----------------------------------------------------------------------------


def ours_round(args: argparse.Namespace, n: int, env: dict[str, str], folder: Path) -> Any:
    """bench_import's import of ``args.rows`` fresh rows, then bench_memory's production and
    supervised shapes at rest."""
    imported = bench_import.run_child(
        str(folder), f"side-{n}", args.rows, (n + 1) * 100_000_000, 0, duplicates=True
    )
    shape = argparse.Namespace(
        port=args.port,
        web_workers=args.web_workers,
        workers=args.web_workers,
        threads=args.threads,
        reviewers=5,
        no_preload=False,
        worker_concurrency=args.worker_concurrency,
    )
    with bench_memory.production(shape, env) as (root, names):
        tree = bench_memory.tree_memory(root, names)
    round_folder = folder / f"supervised-{n}"
    round_folder.mkdir()
    supervised = bench_memory.supervised_at_rest(env, round_folder, args.port)
    shutil.rmtree(round_folder, ignore_errors=True)
    processes = {name: figures["pss"] for name, figures in tree["processes"].items()}
    return {
        "import": {
            key: imported[key]
            for key in (
                "rows",
                "imported",
                "status",
                "seconds",
                "cpu_seconds",
                "peak_rss_mb",
                "reader_peak_rss_mb",
                "images_hashed",
                "derivatives_seconds",
                "load_before",
            )
        },
        "production_pss_mb": tree["pss_total_mb"],
        "production_pss_anon_mb": tree["pss_anon_total_mb"],
        "production_uss_mb": tree["uss_total_mb"],
        "production_pss_each_mb": processes,
        "supervised_pss_mb": supervised["pss_mb"],
        "supervised": supervised,
    }


def prepare_ours(args: argparse.Namespace, folder: Path) -> dict[str, str]:
    """This site's database, fresh and migrated; the environment of its processes."""
    db_url = f"{args.pg}/{args.db}_ours"
    (folder / "staticfiles").mkdir()
    env = production_env(
        database_url=db_url,
        var_dir=folder,
        REDIS_URL=args.redis,
        CELERY_QUEUE=f"bench-labelstudio-{os.getpid()}",
        CELERY_TASK_ALWAYS_EAGER="0",
    )
    make_database(f"{args.pg}/postgres", f"{args.db}_ours")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    os.environ["DATABASE_URL"] = db_url  # bench_import's child process reads it
    return env


# --- both ---------------------------------------------------------------------------------


def summary(rounds: list[dict[str, Any]], ours_only: bool) -> dict[str, Any]:
    ours = [r["ours"] for r in rounds]
    medians: dict[str, Any] = {
        "ours_import_seconds": median([o["import"]["seconds"] for o in ours]),
        "ours_production_pss_mb": median([o["production_pss_mb"] for o in ours]),
        "ours_supervised_pss_mb": median([o["supervised_pss_mb"] for o in ours]),
    }
    ahead: dict[str, Any] = {"import": None, "memory_at_rest": None}
    if not ours_only:
        ls = [r["label_studio"] for r in rounds]
        medians |= {
            "ls_import_seconds": median([x["seconds"] for x in ls]),
            "ls_import_duration_s": median([x["duration_s"] for x in ls]),
            "ls_pss_mb_at_rest": median([x["pss_mb_at_rest"] for x in ls]),
            "ls_pss_mb_after_import": median([x["pss_mb_after_import"] for x in ls]),
        }
        ls_import = min(medians["ls_import_seconds"], medians["ls_import_duration_s"])
        ahead = {
            "import": "ours" if medians["ours_import_seconds"] < ls_import else "label_studio",
            # The shape as shipped (with beat) against Label Studio's one process.
            "memory_at_rest": "ours"
            if medians["ours_supervised_pss_mb"] < medians["ls_pss_mb_at_rest"]
            else "label_studio",
        }
    return {"medians": medians, "ahead": ahead}


def main() -> None:
    parser = argparse.ArgumentParser(description="Side by side with Label Studio 1.23.2.")
    parser.add_argument("--ls", default="/work/ls-venv/bin/label-studio")
    parser.add_argument("--ls-db", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--ours-only", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=41_883)
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db", default="bench_labelstudio")
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--port", type=int, default=8781, help="this site's web port")
    parser.add_argument("--ls-port", type=int, default=8782)
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--worker-concurrency", type=int, default=2)
    args = parser.parse_args()
    if not args.ours_only and not os.access(args.ls, os.X_OK):
        print(
            f"Label Studio not found at {args.ls}: install it (see this script's docstring), "
            "give --ls, or measure this site alone with --ours-only",
            file=sys.stderr,
        )
        raise SystemExit(2)

    load_before = uptime()
    with tempfile.TemporaryDirectory(prefix="bench-labelstudio-") as name:
        folder = Path(name)
        env = prepare_ours(args, folder)
        ls = None
        version = None
        tasks_file = folder / "mmooc-tasks.json"
        if not args.ours_only:
            ls = LabelStudio(args, folder)
            ls.init()
            version = subprocess.run(
                [str(Path(args.ls).parent / "python"), "-c", VERSION],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            jsonl = folder / "mmooc-ls.jsonl"
            bench_import.write_file(jsonl, args.rows, 3_000_000_000)
            write_tasks(jsonl, tasks_file)
            jsonl.unlink()
        rounds = []
        for n in range(args.rounds):
            measured: dict[str, Any] = {"round": n}
            sides = ["label_studio", "ours"] if n % 2 == 0 else ["ours", "label_studio"]
            for side in sides:
                if side == "ours":
                    measured["ours"] = ours_round(args, n, env, folder)
                elif ls is not None:
                    measured["label_studio"] = ls.round(n, tasks_file, args.rows)
            measured["order"] = sides if ls is not None else ["ours"]
            rounds.append(measured)
            print(json.dumps(measured), flush=True)
    print(
        json.dumps(
            {
                "benchmark": "labelstudio_side_by_side",
                "ours_only": args.ours_only,
                "label_studio": version,
                "ls_db": None if args.ours_only else args.ls_db,
                "rows": args.rows,
                "rounds": rounds,
                **summary(rounds, args.ours_only),
                "uptime_before": load_before,
                "uptime_after": uptime(),
            }
        )
    )


if __name__ == "__main__":
    main()
