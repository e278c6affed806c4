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
os.environ.setdefault("VAR_DIR", str(Path(__file__).resolve().parent.parent / "var" / "test"))

from mmooc_site.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests

Path(STATIC_ROOT).mkdir(parents=True, exist_ok=True)  # noqa: F405 - whitenoise warns without it
