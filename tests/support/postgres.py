"""A PostgreSQL server of a test's own (Debian's binaries, a data folder in /tmp, a free port),
which the test may stop and start again; the machine's server is never touched."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg

from tests.support.processes import free_port, wait_until

BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))


def available() -> str | None:
    """None when the server can run here, else why not."""
    if not (BIN / "pg_ctl").exists():
        return f"PostgreSQL's server binaries are missing ({BIN})"
    return None


class PostgresServer:
    """initdb'd once, started and stopped at will (``pg_ctl -m fast``: every session is cut,
    as a restart does); as root, run as the ``postgres`` user, which must own its folder."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="pg-test-", dir="/tmp"))
        self.data = self.folder / "data"
        self.port = free_port()
        self._as_root = os.geteuid() == 0
        if self._as_root:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run(BIN / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8")

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def _run(self, *args: str | Path) -> None:
        command = [str(a) for a in args]
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, cwd=self.folder)

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run(
            BIN / "pg_ctl", "-D", self.data, "-l", self.folder / "log", "-o", options, "-w", "start"
        )
        wait_until(self.answers, timeout=30, what=f"PostgreSQL on port {self.port}")

    def stop(self) -> None:
        self._run(BIN / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def answers(self) -> bool:
        try:
            with psycopg.connect(self.url("postgres"), connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def close(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
