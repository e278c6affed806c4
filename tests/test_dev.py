"""The README's run command (dev.py run) with no DATABASE_URL: it starts a PostgreSQL server of
its own, serves the demo on it, a reviewer works through the review loop in the browser, and
a stop ends the server, the worker and the database."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.browser import chromium_page
from tests.support.processes import free_port, wait_until

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.browser


def _postgres_running(data: Path) -> bool:
    return any(
        process.info["name"] == "postgres" and str(data) in " ".join(process.info["cmdline"] or [])
        for process in psutil.process_iter(attrs=["name", "cmdline"])
    )


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder that the embedded PostgreSQL's system user can reach: pytest keeps its own
    temporary folders private to root (and makes them so again at every session start)."""
    folder = Path(tempfile.mkdtemp(prefix="dev-run-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_dev_run_serves_the_demo_on_its_own_postgresql_and_a_reviewer_reviews(
    outside_tmp: Path,
) -> None:
    """Without DATABASE_URL, dev.py run migrates an embedded PostgreSQL in VAR_DIR, loads the
    demo, prints the logins once the site answers, and an annotator signs in, starts
    reviewing and submits by keys to the next sample; SIGTERM stops everything it started."""
    tmp_path = outside_tmp
    var, port = tmp_path / "var", free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env |= {"VAR_DIR": str(var), "PORT": str(port), "PYTHONUNBUFFERED": "1"}
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            [sys.executable, "dev.py", "run"], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    try:
        wait_until(
            lambda: "runs at" in log.read_text() or process.poll() is not None,
            timeout=240,
            what="dev.py run to serve the site",
        )
        output = log.read_text()
        assert process.poll() is None, output
        assert re.search(r"annotator\s+demo-annotator\s", output), output
        assert _postgres_running(var / "postgres")
        base = f"http://127.0.0.1:{port}"
        with chromium_page() as page:
            page.goto(f"{base}/login/")
            page.fill("input[name=username]", "annotator")
            page.fill("input[name=password]", "demo-annotator")
            page.click("form [type=submit]")
            page.wait_for_url(lambda url: "/login/" not in url)
            page.goto(f"{base}/")
            page.locator("a[href*='/review/datasets/']").first.click()
            page.click("#start-review")
            page.wait_for_url(re.compile(r".*/review/samples/\d+/$"))
            first = page.url
            page.keyboard.press("a")
            page.keyboard.press("Control+Enter")
            page.wait_for_url(lambda url: url != first)
            assert re.search(r"/review/samples/\d+/$", page.url)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
    deadline = time.monotonic() + 30
    while _postgres_running(var / "postgres") and time.monotonic() < deadline:
        time.sleep(0.2)  # the server stops after its last client: no event to wait on
    assert not _postgres_running(var / "postgres"), log.read_text()
