"""A real OpenID Connect provider on loopback for the single sign-on tests: panva's
oidc-provider (the npm package, certified) run by Node, from tests/support/oidc_provider.

Its packages are installed on first use with ``npm ci`` from the committed lock file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.processes import free_port, wait_until

FOLDER = Path(__file__).resolve().parent / "oidc_provider"


@dataclass(frozen=True)
class IdentityProvider:
    issuer: str
    client_id: str
    client_secret: str


def _install() -> None:
    if (FOLDER / "node_modules" / "oidc-provider").is_dir():
        return
    npm = shutil.which("npm")
    assert npm is not None, "tests using the provider are marked node, which checks for npm"
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=FOLDER,
        check=True,
        timeout=600,
    )


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@contextmanager
def identity_provider(
    *, redirect_uris: list[str], accounts: dict[str, dict[str, Any]], log: Path
) -> Iterator[IdentityProvider]:
    """Start the provider with one confidential client allowed to ``redirect_uris`` and the
    given accounts (name → claims: email, name, groups); stop it after the block."""
    _install()
    node = shutil.which("node")
    assert node is not None
    port = free_port()
    provider = IdentityProvider(f"http://127.0.0.1:{port}", "review-studio", "test-only-secret")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PORT": str(port),
        "CLIENT_ID": provider.client_id,
        "CLIENT_SECRET": provider.client_secret,
        "REDIRECT_URIS": ",".join(redirect_uris),
        "ACCOUNTS": json.dumps(accounts),
        "NODE_ENV": "test",
    }
    with log.open("wb") as output:
        process = subprocess.Popen(
            [node, str(FOLDER / "server.mjs")],
            cwd=FOLDER,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            discovery = f"{provider.issuer}/.well-known/openid-configuration"
            wait_until(
                lambda: process.poll() is None and _answers(discovery),
                timeout=30,
                what=f"the OpenID Connect provider ({log.read_text(errors='replace')[-2000:]})",
            )
            yield provider
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
