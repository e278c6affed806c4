"""Settings for the test suite: the production settings, with test defaults put in the
environment first, so that every process a test starts (a worker, a server) shares them.

Services still come from the environment (DATABASE_URL, REDIS_URL): `python3 dev.py test`
sets DATABASE_URL (its embedded PostgreSQL unless one is given); the default here is the
machine's PostgreSQL, for a bare `pytest` and for the type checker, which loads these settings.
"""

import os
import uuid
from pathlib import Path

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
# Statements are prepared as in production, where connections persist (the suite's do not).
os.environ.setdefault("PREPARE_STATEMENTS", "1")
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-" + "x" * 32)
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")
# A queue of this run's own, so a worker never eats another run's messages (or vice versa).
os.environ.setdefault("CELERY_QUEUE", f"tests-{uuid.uuid4().hex[:8]}")
# Tests speak plain HTTP to the test client and live servers, and make many calls a minute.
for _name in ("SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"):
    os.environ.setdefault(_name, "0")
os.environ.setdefault("SECURE_HSTS_SECONDS", "0")
# Leads sign in with a password alone unless a test asks for the second factor.
os.environ.setdefault("REQUIRE_LEAD_2FA", "0")
# A page (with eager tasks) counts the verdicts a test just wrote: their marks are never new.
os.environ.setdefault("LEADERBOARD_REFRESH_SECONDS", "0")
os.environ.setdefault("API_THROTTLE_ANON", "100000/minute")
os.environ.setdefault("API_THROTTLE_USER", "100000/minute")
os.environ.setdefault("CACHE_KEY_PREFIX", f"tests-{uuid.uuid4().hex[:8]}")
# Under pytest-xdist every worker has a test database of its own, so it needs a queue and
# cache keys of its own too: the workers inherit the controller's, and a Celery worker started
# by one of them would otherwise run the other's tasks against the wrong database.
_xdist = os.environ.get("PYTEST_XDIST_WORKER", "")
for _name in ("CELERY_QUEUE", "CACHE_KEY_PREFIX"):
    if _xdist and not os.environ[_name].endswith(f"-{_xdist}"):
        os.environ[_name] = f"{os.environ[_name]}-{_xdist}"
os.environ.setdefault("VAR_DIR", str(Path(__file__).resolve().parents[2] / "var" / "test"))

from mmooc_site.settings.production import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
if not REDIS_URL:  # noqa: F405 - no cache table to create in every test database
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
