"""The launcher (mmooc_site/launch.py): it starts again a program that exits, waits longer while
one keeps exiting at once, stops every program on SIGTERM, and its programs end when it is
killed. The site's own programs under it: tests/deploy/test_supervisord.py."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from mmooc_site import launch
from tests.support.processes import ROOT, wait_until

# Two programs that sleep (or, with EXIT set, exit at once with that status) under Launcher.
PROGRAMS = """
import os, sys, time
from mmooc_site.launch import Launcher

def program():
    if os.environ.get("EXIT"):
        sys.exit(int(os.environ["EXIT"]))
    time.sleep(300)

sys.exit(Launcher({"web": program, "worker": program}).run())
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


class Running:
    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process, self.log = process, log

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def started(self, name: str) -> list[int]:
        return [int(pid) for pid in re.findall(rf"{name} started \(pid (\d+)\)", self.text())]


@contextmanager
def launcher(tmp_path: Path, **env: str) -> Iterator[Running]:
    log = tmp_path / "launch.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", PROGRAMS],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    running = Running(process, log)
    try:
        wait_until(
            lambda: bool(running.started("web") and running.started("worker")),
            timeout=30,
            what="both programs to start",
        )
        yield running
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        for pid in running.started("web") + running.started("worker"):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_killed_program_starts_again_and_sigterm_stops_them_all(tmp_path: Path) -> None:
    with launcher(tmp_path) as running:
        (web,) = running.started("web")
        (worker,) = running.started("worker")
        os.kill(web, signal.SIGKILL)
        wait_until(lambda: len(running.started("web")) == 2, timeout=10, what="a new web")
        assert f"web (pid {web}) exited (-9)" in running.text()
        assert running.started("worker") == [worker] and _alive(worker)
        running.process.send_signal(signal.SIGTERM)
        assert running.process.wait(timeout=20) == 0
        assert not any(_alive(pid) for pid in [*running.started("web"), worker])
        assert running.text().rstrip().endswith("stopped")


def test_a_program_exiting_at_once_is_started_again_after_longer_waits(tmp_path: Path) -> None:
    with launcher(tmp_path, EXIT="3") as running:
        wait_until(lambda: len(running.started("web")) >= 3, timeout=20, what="two restarts")
        waits = re.findall(
            r"web \(pid \d+\) exited \(3\) after [\d.]+ s; again in (\d+) s", running.text()
        )
        assert waits[:2] == ["1", "2"]


def test_the_programs_end_when_the_launcher_is_killed(tmp_path: Path) -> None:
    """Each program gets SIGTERM when the launcher dies (PR_SET_PDEATHSIG), so none is left
    holding the port or the queue for the launcher started after it."""
    with launcher(tmp_path) as running:
        programs = running.started("web") + running.started("worker")
        running.process.kill()
        running.process.wait(timeout=10)
        wait_until(
            lambda: not any(_alive(pid) for pid in programs), timeout=10, what="the programs to end"
        )


def test_the_launcher_needs_a_program() -> None:
    with pytest.raises(SystemExit) as stop:
        launch.main([])
    assert stop.value.code == 2
