"""Settings for the test suite: the real settings, with test defaults put in the environment first.

Services still come from the environment (DATABASE_URL, REDIS_URL), so CI tests PostgreSQL
and Redis while a bare checkout tests SQLite and skips what needs the missing services.
"""

import os
import uuid
from pathlib import Path

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
os.environ.setdefault("API_THROTTLE_ANON", "100000/minute")
os.environ.setdefault("API_THROTTLE_USER", "100000/minute")
os.environ.setdefault("CACHE_KEY_PREFIX", f"tests-{uuid.uuid4().hex[:8]}")
os.environ.setdefault("VAR_DIR", str(Path(__file__).resolve().parent.parent / "var" / "test"))

from mmooc_site.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
if not REDIS_URL:  # noqa: F405 - no cache table to create in every test database
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
