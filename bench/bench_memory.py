"""Benchmark: how much memory the site's processes hold (RSS and PSS from /proc/PID/smaps_rollup).

Builds its own PostgreSQL database (``bench_memory`` by default, dropped and migrated) with a
small MMOOC-shaped dataset and its review queue (``bench_review.build``), then:

1. one web process and one worker process: gunicorn with one worker (the production shape's
   worker class, threads and ``--preload``) and a Celery prefork worker with one pool process,
   on Redis. The web worker is measured at rest (booted, after the warm-up's ``/healthz/``
   requests) and after serving a short review loop (``bench_review.site_phase``: a few
   reviewers looping claim + submit through the API); the Celery pool process at rest and
   after an import (a small MMOOC JSON-lines file from ``bench_import.write_file``, imported
   and every image derived by that worker);
2. the production shape (``mmooc_site.launch``: one process that loads the site and forks
   gunicorn ``-w W --threads T [--preload]`` and Celery ``-c C``): the PSS of every process of
   its tree summed, at rest and after the review loop; then the same programs started as two
   commands, each its own tree (the shape before issue 30's launcher: ``two_trees_*``);
3. the supervised shape as shipped (``deploy/supervisord.conf``, or ``--supervisord-conf``:
   supervisord, the launcher, the web, the worker with beat as its thread): the PSS of
   supervisord's whole process tree at rest (booted, after the warm-up's ``/healthz/``
   requests).

PSS divides each shared page among the processes mapping it, so the production total counts
what ``--preload`` and prefork share once; RSS counts shared pages in every process.

Prints the figures as one JSON object on the last line (MB = 2**20 bytes).

Run: DATABASE_URL is not read; give --pg and --redis (defaults: local PostgreSQL, REDIS_URL
     or else Redis db 0):
     .venv/bin/python bench/bench_memory.py [--db bench_memory] [--web-workers 2 --threads 4
     --worker-concurrency 2] [--no-preload] [--seconds 10] [--reviewers 5] [--import-rows 200]
     [--supervisord-conf deploy/supervisord.conf]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import bench_import, bench_review  # noqa: E402 - after the repository joins the path
from bench.support import make_database, production_env  # noqa: E402
from tests.support.processes import (  # noqa: E402
    celery_worker,
    celery_worker_options,
    wait_until,
)

MB = 1024 * 1024


_FIELDS = {"Rss": "rss", "Pss": "pss", "Pss_Anon": "pss_anon", "Pss_File": "pss_file"}


def memory(pid: int) -> dict[str, float]:
    """RSS and PSS of one process, in MB; and PSS's anonymous and file-backed parts (a file's
    pages are divided among every process of the machine that maps them, this site's or not)
    and USS (the pages only this process maps)."""
    fields: dict[str, float] = {}
    private = 0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        if name in _FIELDS:
            fields[_FIELDS[name]] = round(int(value.split()[0]) * 1024 / MB, 1)
        elif name in {"Private_Clean", "Private_Dirty"}:
            private += int(value.split()[0])
    return fields | {"uss": round(private * 1024 / MB, 1)}


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            # "pid (comm) state ppid ...": comm may hold spaces, so split after its ")".
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return sorted(found)


def tree_memory(root: int, names: dict[int, str] | None = None) -> dict[str, Any]:
    """The root's and each of its descendants' RSS and PSS, and the PSS of them all together;
    ``names`` names some of the processes (the others are ``child_N``)."""
    names = names or {}
    processes = {"main": memory(root)} | {
        names.get(pid, f"child_{i}"): memory(pid) for i, pid in enumerate(descendants(root))
    }
    return {
        "processes": processes,
        "pss_total_mb": round(sum(p["pss"] for p in processes.values()), 1),
        "rss_total_mb": round(sum(p["rss"] for p in processes.values()), 1),
        "pss_anon_total_mb": round(sum(p.get("pss_anon", 0) for p in processes.values()), 1),
        "uss_total_mb": round(sum(p["uss"] for p in processes.values()), 1),
    }


def _lines(folder: Path) -> set[bytes]:
    """The markers of the programs' logs in ``folder`` that say the worker and its beat are up."""
    text = b"".join(log.read_bytes() for log in folder.glob("*.log"))
    return {marker for marker in (b"ready.", b"beat: Starting") if marker in text}


def descendants(root: int) -> list[int]:
    """Every process below ``root``, children and theirs."""
    found, todo = [], [root]
    while todo:
        kids = children(todo.pop())
        found.extend(kids)
        todo.extend(kids)
    return found


SUPERVISORD_CONF = ROOT / "deploy" / "supervisord.conf"


@contextlib.contextmanager
def supervised(
    env: dict[str, str], folder: Path, port: int, config: Path = SUPERVISORD_CONF
) -> Iterator[int]:
    """supervisord on ``config`` (deploy/supervisord.conf), its web on ``port``; yields its pid
    once the web answers /livez/, the worker is ready and its beat has started."""

    var_dir = folder / "supervised"
    var_dir.mkdir()
    bin_dir = Path(sys.executable).parent
    full = {
        **env,
        "VAR_DIR": str(var_dir),
        "PATH": f"{bin_dir}:{env.get('PATH', '')}",
        "GUNICORN_CMD_ARGS": f"--bind 127.0.0.1:{port}",
    }
    process = subprocess.Popen(
        [str(bin_dir / "supervisord"), "-c", str(config)],
        cwd=ROOT,
        env=full,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def up() -> bool:
        if not {b"ready.", b"beat: Starting"} <= _lines(var_dir):
            return False
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/livez/", timeout=2):
                return True
        except OSError:
            return False

    try:
        wait_until(up, timeout=120, what="the supervised shape")
        yield process.pid
    finally:
        process.terminate()
        process.wait(timeout=120)


def largest_child(root: int) -> dict[str, float]:
    """The child of ``root`` with the largest RSS (a gunicorn worker, a Celery pool process)."""
    kids = [memory(pid) for pid in children(root)]
    return max(kids, key=lambda m: m["rss"])


@contextlib.contextmanager
def celery(env: dict[str, str], concurrency: int) -> Iterator[int]:
    """A Celery worker whose pool processes have all started; yields the main process id."""
    with celery_worker(env, concurrency=concurrency) as process:
        wait_until(
            lambda: len(children(process.pid)) >= concurrency,
            timeout=60,
            what="the Celery pool processes",
        )
        yield process.pid


def import_and_derive(folder: Path, dataset_id: int, rows: int) -> dict[str, Any]:
    """Queue an import of a small MMOOC file for the worker; wait until every image is derived."""
    from annotation.models import Dataset, ImportJob, MediaAsset
    from tests.annotation.imports_support import import_job_of

    path = folder / f"memory-{time.time_ns()}.jsonl"
    bench_import.write_file(path, rows, first=time.time_ns() % 10**9 * 1000)
    dataset = Dataset.objects.get(pk=dataset_id)
    job = import_job_of(dataset, "mmooc", path, queue=True)
    started = time.perf_counter()
    ended = {"succeeded", "succeeded_with_errors", "failed", "cancelled"}
    wait_until(
        lambda: ImportJob.objects.get(pk=job.pk).status in ended,
        timeout=600,
        what="the import job to end",
    )
    pending = MediaAsset.objects.filter(
        sample_links__sample__dataset=dataset, derived_at__isnull=True
    )
    wait_until(lambda: not pending.exists(), timeout=600, what="every derivative")
    job.refresh_from_db()
    return {
        "status": job.status,
        "imported": job.imported,
        "seconds": round(time.perf_counter() - started, 1),
    }


def web_args(args: argparse.Namespace, workers: int) -> tuple[argparse.Namespace, list[str]]:
    """bench_review.gunicorn's arguments and extra options for ``workers`` web processes."""
    namespace = argparse.Namespace(
        port=args.port, workers=workers, threads=args.threads, reviewers=args.reviewers
    )
    return namespace, [] if args.no_preload else ["--preload"]


@contextlib.contextmanager
def production(
    args: argparse.Namespace, env: dict[str, str]
) -> Iterator[tuple[int, dict[int, str]]]:
    """The production shape running: ``mmooc_site.launch`` forking gunicorn (``-w
    args.web_workers --threads args.threads``, ``--preload`` unless ``args.no_preload``; booted
    and warmed up) and a Celery prefork worker (``args.worker_concurrency`` pool processes,
    started); yields the launcher's id and the names of its processes (``web_master``,
    ``web_N``, ``worker_main``, ``pool_N``)."""
    gunicorn_args, extra = web_args(args, args.web_workers)
    log_path = Path(env["VAR_DIR"]) / f"launch-{time.time_ns()}.log"
    options = celery_worker_options(env["CELERY_QUEUE"], concurrency=args.worker_concurrency)
    argv = [sys.executable, "-m", "mmooc_site.launch"]
    argv += ["--web", shlex.join(bench_review.gunicorn_options(gunicorn_args, extra))]
    argv += ["--worker", shlex.join(options)]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            argv,
            cwd=ROOT,
            env={**env, "BENCH_CLAIM_SQL": bench_review.CLAIM_SQL},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            bench_review.wait_serving(gunicorn_args, process)
            wait_until(
                lambda: b"ready." in log_path.read_bytes(), timeout=60, what="the Celery worker"
            )
            started = dict(
                re.findall(rb"(web|worker) started \(pid (\d+)\)", log_path.read_bytes())
            )
            web, worker = int(started[b"web"]), int(started[b"worker"])
            wait_until(
                lambda: len(children(worker)) >= args.worker_concurrency,
                timeout=60,
                what="the Celery pool processes",
            )
            names = {web: "web_master", worker: "worker_main"}
            names |= {pid: f"web_{i}" for i, pid in enumerate(children(web))}
            names |= {pid: f"pool_{i}" for i, pid in enumerate(children(worker))}
            yield process.pid, names
        finally:
            process.terminate()
            process.wait(timeout=90)


@contextlib.contextmanager
def two_trees(args: argparse.Namespace, env: dict[str, str]) -> Iterator[tuple[int, int]]:
    """The same programs started as two commands (the production shape before the launcher):
    gunicorn as ``production`` runs it and a Celery worker with ``args.worker_concurrency``
    pool processes; yields the gunicorn master's and the Celery main process's ids."""
    gunicorn_args, extra = web_args(args, args.web_workers)
    with (
        bench_review.gunicorn(gunicorn_args, env, extra) as web,
        celery(env, args.worker_concurrency) as worker,
    ):
        yield web.pid, worker


def supervised_at_rest(
    env: dict[str, str], folder: Path, port: int, config: Path = SUPERVISORD_CONF
) -> dict[str, Any]:
    """The supervised shape as shipped (``config``), booted and warmed up (a few ``/healthz/``
    requests): how many processes supervisord's tree holds, their PSS and RSS summed, and
    supervisord's own PSS (MB)."""
    with supervised(env, folder, port, config) as root:
        for _ in range(5):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz/", timeout=5).close()
        tree = [root, *descendants(root)]
        figures = [memory(pid) for pid in tree]
        commands = [command(pid) for pid in tree]
    return {
        "processes": len(tree),
        "pss_mb": round(sum(m["pss"] for m in figures), 1),
        "rss_mb": round(sum(m["rss"] for m in figures), 1),
        "pss_anon_mb": round(sum(m.get("pss_anon", 0) for m in figures), 1),
        "uss_mb": round(sum(m["uss"] for m in figures), 1),
        "supervisord_pss_mb": figures[0]["pss"],
        "each": [m | {"command": c} for m, c in zip(figures, commands, strict=True)],
    }


def command(pid: int) -> str:
    """The first words of a process's command line (which program of the shape it is)."""
    with contextlib.suppress(OSError):
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        first, *rest = (word.decode() for word in words[:4])
        return " ".join([Path(first).name, *rest])
    return ""


def review_loop(args: argparse.Namespace, built: dict[str, Any]) -> dict[str, Any]:
    ds = built["dataset_id"]
    loop = bench_review.site_phase(
        args.port,
        f"/api/datasets/{ds}/claim/",
        "/api/reviews/",
        [{"Authorization": f"Token {token}"} for token in built["tokens"]],
        args.seconds,
    )
    if loop["error_count"]:
        raise SystemExit(f"the review loop failed: {loop['errors']}")
    return {"claims": loop["claims"], "submits": loop["submits"], "seconds": loop["seconds"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default="bench_memory")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--reviewers", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--import-rows", type=int, default=200)
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--no-preload", action="store_true")
    parser.add_argument("--supervisord-conf", type=Path, default=SUPERVISORD_CONF)
    args = parser.parse_args()

    db_url = f"{args.pg}/{args.db}"
    folder = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    (folder / "staticfiles").mkdir()
    env = production_env(
        database_url=db_url,
        var_dir=folder,
        REDIS_URL=args.redis,
        CELERY_QUEUE=f"bench-memory-{os.getpid()}",
        CELERY_TASK_ALWAYS_EAGER="0",
    )
    os.environ.update(env)
    make_database(f"{args.pg}/postgres", args.db)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    built = bench_review.build(args.samples, args.reviewers, 2)
    result: dict[str, Any] = {
        "shape": {
            "web_workers": args.web_workers,
            "threads": args.threads,
            "preload": not args.no_preload,
            "worker_concurrency": args.worker_concurrency,
        }
    }

    # 1. One web process and one worker process.
    gunicorn_args, extra = web_args(args, 1)
    with bench_review.gunicorn(gunicorn_args, env, extra) as web, celery(env, 1) as worker:
        web_at_rest = largest_child(web.pid)
        worker_at_rest = largest_child(worker)
        worker_main_at_rest = memory(worker)
        result["review_loop"] = review_loop(args, built)
        web_after = largest_child(web.pid)
        result["import"] = import_and_derive(folder, built["dataset_id"], args.import_rows)
        worker_after = largest_child(worker)
    print(f"one web process: at rest {web_at_rest}, after the review loop {web_after}")
    print(f"one worker process: at rest {worker_at_rest}, after an import {worker_after}")

    # 2. The production shape: one tree; then the same programs as two.
    with production(args, env) as (root, names):
        tree = tree_memory(root, names)
        review_loop(args, built)
        tree_after = tree_memory(root, names)
    production_pss, production_after = tree["pss_total_mb"], tree_after["pss_total_mb"]
    print(f"production shape at rest: {tree}")
    print(f"production shape after the review loop: {tree_after}")
    with two_trees(args, env) as (web, worker):
        web_tree, worker_tree = tree_memory(web), tree_memory(worker)
        review_loop(args, built)
        web_tree_after, worker_tree_after = tree_memory(web), tree_memory(worker)
    two_pss = round(web_tree["pss_total_mb"] + worker_tree["pss_total_mb"], 1)
    two_after = round(web_tree_after["pss_total_mb"] + worker_tree_after["pss_total_mb"], 1)
    print(f"two trees at rest: web {web_tree}, worker {worker_tree}")
    print(f"two trees after the review loop: web {web_tree_after}, worker {worker_tree_after}")

    # 3. The supervised shape as shipped.
    at_rest = supervised_at_rest(env, folder, args.port, args.supervisord_conf)
    print(f"supervised shape at rest: {at_rest['processes']} processes, {at_rest['pss_mb']} MB PSS")

    result |= {
        "supervised_processes": at_rest["processes"],
        "supervised_pss_mb": at_rest["pss_mb"],
        "supervised_rss_mb": at_rest["rss_mb"],
        "web_rss_mb_at_rest": web_at_rest["rss"],
        "web_pss_mb_at_rest": web_at_rest["pss"],
        "web_rss_mb_after_serving": web_after["rss"],
        "web_pss_mb_after_serving": web_after["pss"],
        "worker_rss_mb_at_rest": worker_at_rest["rss"],
        "worker_pss_mb_at_rest": worker_at_rest["pss"],
        "worker_main_rss_mb_at_rest": worker_main_at_rest["rss"],
        "worker_rss_mb_after_import": worker_after["rss"],
        "worker_pss_mb_after_import": worker_after["pss"],
        "production_pss_mb": production_pss,
        "production_rss_mb": tree["rss_total_mb"],
        "production_pss_mb_after_serving": production_after,
        "production_pss_mb_each": {name: p["pss"] for name, p in tree["processes"].items()},
        "two_trees_pss_mb": two_pss,
        "two_trees_pss_mb_after_serving": two_after,
        "two_trees_pss_mb_each": {
            f"{side}_{name}": p["pss"]
            for side, one in (("web", web_tree), ("worker", worker_tree))
            for name, p in one["processes"].items()
        },
        "goals": {
            "web_rss_mb_after_serving": 90,
            "worker_rss_mb_at_rest": 120,
            "production_pss_mb": 450,
            "supervised_pss_mb": 300,
        },
    }
    result["goals_met"] = all(result[key] <= goal for key, goal in result["goals"].items())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
