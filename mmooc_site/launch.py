"""The site's programs as one process tree: ``python -m mmooc_site.launch --web … --worker …``.

``--web`` is gunicorn's command line (without ``gunicorn``), ``--worker`` Celery's (without
``celery``); either alone runs that program only (a web host, a worker host). The launcher
loads what the programs need (Django and the apps, the URL configuration and DRF for the web,
Celery, kombu's Redis transport and the task modules for the worker, gunicorn's arbiter and
Celery's worker themselves), moves it out of the garbage collector's reach, and forks the
gunicorn master and the Celery worker's main process from that one loaded process. gunicorn's
workers (``--preload``) and Celery's pool processes are forks of those, so every process of the
site shares one copy of those pages; started as two commands, each tree loaded a copy of its
own (about 90 MB: docs/performance.md, "Memory at rest, below Label Studio?").

The launcher starts again a program that exits (a crash, a kill, the OOM killer): after 1 s,
then after longer waits (up to 10 s) while it keeps exiting within 10 s of its start. SIGTERM,
SIGINT or SIGQUIT stop it: each program gets SIGTERM (gunicorn's graceful stop, Celery's warm
shutdown, which waits for running tasks) and the launcher exits once both have. SIGHUP is
passed to gunicorn (which reloads its workers). Each program gets SIGTERM too if the launcher
dies (Linux's ``PR_SET_PDEATHSIG``), so a launcher killed by force leaves no program behind to
hold the port or the queue. deploy/supervisord.conf runs it (and starts it again if it exits).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import importlib
import os
import shlex
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType

# What the programs import at start, beyond Django and the apps: loaded by the launcher so
# that the forks share them (a module left out is imported by the program itself, unshared).
WEB_MODULES = (
    "gunicorn.app.wsgiapp",
    "gunicorn.arbiter",
    "gunicorn.workers.gthread",
    "mmooc_site.wsgi",  # django.setup(), the URL configuration, the views, DRF
)
WORKER_MODULES = (
    "celery.bin.celery",
    "celery.apps.worker",
    "celery.worker.worker",
    "celery.worker.components",
    "celery.worker.consumer",
    "celery.worker.control",
    "celery.worker.loops",
    "celery.worker.pidbox",
    "celery.worker.request",
    "celery.worker.strategy",
    "celery.app.trace",
    "celery.concurrency.prefork",
    "celery.concurrency.asynpool",
    "celery.beat",
    "kombu.asynchronous",
    "mmooc_site.redisbroker",  # kombu's Redis transport and redis-py
)
# The cache's client (and the broker's): the web loads them on its first request.
SHARED_MODULES = ("redis", "django.core.cache.backends.redis")

RESTART_DELAYS = (1.0, 2.0, 5.0, 10.0)  # seconds, after 1, 2, 3, 4+ quick exits in a row
QUICK_EXIT = 10.0  # seconds: a program that ran less than this before exiting counts as quick
_PR_SET_PDEATHSIG = 1  # <sys/prctl.h>


def log(message: str) -> None:
    print(f"[launch {os.getpid()}] {message}", file=sys.stderr, flush=True)


def preload(*, web: bool, worker: bool) -> None:
    """Import Django, the apps and every module the programs start with; freeze it all."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings.production")
    import django

    django.setup()
    modules = list(SHARED_MODULES)
    if web:
        modules += WEB_MODULES
    if worker:
        modules += WORKER_MODULES
    for name in modules:
        importlib.import_module(name)
    if worker:
        from mmooc_site.celery import app

        app.loader.import_default_modules()  # the task modules (and Django's system checks)
    from django.db import connections

    connections.close_all()  # none should be open; a fork must not share one
    gc.freeze()


def run_gunicorn(args: list[str]) -> None:
    """gunicorn's command line (``gunicorn ARGS``), in this process."""
    from gunicorn.app.wsgiapp import WSGIApplication

    # gunicorn reads its options from sys.argv (and re-executes it on USR2).
    sys.argv = [str(Path(sys.executable).with_name("gunicorn")), *args]
    WSGIApplication("%(prog)s [OPTIONS] [APP_MODULE]", prog="gunicorn").run()


def run_celery(args: list[str]) -> None:
    """Celery's command line (``celery ARGS``), in this process."""
    from celery.bin.celery import main

    # Celery reads its options from sys.argv (and re-executes it on a worker's SIGHUP).
    sys.argv = [str(Path(sys.executable).with_name("celery")), *args]
    sys.exit(main())


def _die_with(parent: int) -> None:
    """SIGTERM for this process when ``parent`` dies (Linux); exit now if it already has."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


_HANDLED = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGHUP)


class Launcher:
    """Forks each program, starts it again when it exits, stops them all on a signal."""

    def __init__(self, programs: dict[str, Callable[[], None]]) -> None:
        self.programs = programs
        self.pids: dict[int, str] = {}
        self.started: dict[str, float] = {}
        self.quick_exits = dict.fromkeys(programs, 0)
        self.stopping = False

    def start(self, name: str) -> None:
        parent = os.getpid()
        sys.stdout.flush()  # or the child would write the buffered text again
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the program's process: never returns
            code = 1
            try:
                for number in _HANDLED:
                    signal.signal(number, signal.SIG_DFL)
                _die_with(parent)
                gc.enable()
                self.programs[name]()
                code = 0
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        self.pids[pid] = name
        self.started[name] = time.monotonic()
        log(f"{name} started (pid {pid})")

    def signal_all(self, number: int, names: tuple[str, ...] | None = None) -> None:
        for pid, name in list(self.pids.items()):
            if names is None or name in names:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, number)

    def on_stop(self, number: int, frame: FrameType | None) -> None:
        self.stopping = True
        self.signal_all(signal.SIGTERM)

    def on_hup(self, number: int, frame: FrameType | None) -> None:
        self.signal_all(signal.SIGHUP, ("web",))

    def wait_before_restart(self, name: str, seconds: float) -> None:
        """Sleep ``seconds`` unless a stop comes first."""
        deadline = time.monotonic() + seconds
        while not self.stopping and time.monotonic() < deadline:
            time.sleep(0.1)

    def run(self) -> int:
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
            signal.signal(number, self.on_stop)
        signal.signal(signal.SIGHUP, self.on_hup)
        for first in self.programs:
            self.start(first)
        while self.pids:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            if pid not in self.pids:
                continue
            name = self.pids.pop(pid)
            if self.stopping:
                continue
            ran = time.monotonic() - self.started[name]
            quick = self.quick_exits[name] = self.quick_exits[name] + 1 if ran < QUICK_EXIT else 1
            delay = RESTART_DELAYS[min(quick, len(RESTART_DELAYS)) - 1]
            code = os.waitstatus_to_exitcode(status)
            log(f"{name} (pid {pid}) exited ({code}) after {ran:.1f} s; again in {delay:.0f} s")
            self.wait_before_restart(name, delay)
            if not self.stopping:
                self.start(name)
        log("stopped")
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mmooc_site.launch",
        description="Run gunicorn and the Celery worker as forks of one loaded process.",
    )
    parser.add_argument("--web", metavar="ARGS", help="gunicorn's options and application")
    parser.add_argument("--worker", metavar="ARGS", help="celery's command line, e.g. '-A …'")
    options = parser.parse_args(argv)
    if not (options.web or options.worker):
        parser.error("give --web, --worker or both")
    # Collections while loading would leave freed holes in pages the forks then write into
    # (Python's gc.freeze() documentation); the programs collect as usual once forked.
    gc.disable()
    preload(web=bool(options.web), worker=bool(options.worker))
    programs: dict[str, Callable[[], None]] = {}
    if options.web:
        web_args = shlex.split(options.web)
        programs["web"] = lambda: run_gunicorn(web_args)
    if options.worker:
        worker_args = shlex.split(options.worker)
        programs["worker"] = lambda: run_celery(worker_args)
    return Launcher(programs).run()


if __name__ == "__main__":
    sys.exit(main())
