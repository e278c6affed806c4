#!/usr/bin/env python3
"""The two commands of the README, needing nothing but Python 3.11.

    python3 dev.py run    set up, load the demo and run the site with a background worker
    python3 dev.py test   set up, then run ruff, mypy, import-linter, djLint and every test

Set-up makes a virtualenv in .venv and installs the pinned requirements with uv (fetched into
the virtualenv by pip), skipping the install when the requirement files have not changed.
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

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
PYTHON = BIN / "python"


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


LOCAL_JUDGE_HOSTS = ",".join(
    f"{host}:{port}" for host in ("localhost", "127.0.0.1") for port in (11434, 8001, 30000)
)


def local_env() -> dict[str, str]:
    """Embedded defaults for the run command: SQLite, local media, a filesystem broker."""
    var = ROOT / "var"
    var.mkdir(exist_ok=True)
    key_file = var / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
    env = dict(os.environ)
    env.setdefault("SECRET_KEY", key_file.read_text().strip())
    env.setdefault("DEBUG", "1")
    # Local model servers on this machine may be judges: Ollama, vLLM on 8001, SGLang.
    env.setdefault("JUDGE_ALLOWED_HOSTS", LOCAL_JUDGE_HOSTS)
    return env


def run() -> int:
    ensure_venv("requirements.txt")
    env = local_env()
    manage = [PYTHON, ROOT / "manage.py"]
    _run(*manage, "migrate", "--noinput", env=env)
    _run(*manage, "compile_translations", env=env)
    _run(*manage, "demo", env=env)
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
    for _ in range(100):
        try:
            with urllib.request.urlopen(url + "healthz/", timeout=1):  # noqa: S310
                break
        except OSError:
            time.sleep(0.2)
    print(f"\nThe review studio runs at {url}  (log in with a demo login above; Ctrl-C stops)\n")
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


def test(extra: list[str]) -> int:
    ensure_venv("requirements-dev.txt")
    env = dict(os.environ)
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
        [str(PYTHON), "-m", "pytest", *extra], cwd=ROOT, env=env
    )
    if failed:
        print("ruff, mypy or djLint found problems (see above).", flush=True)
        return 1
    return result.returncode


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in {"run", "test"}:
        print(__doc__)
        return 2
    if sys.argv[1] == "run":
        return run()
    return test(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
