"""A web process (the WSGI application and its URL configuration) and a worker's task modules
load none of the heavy libraries: those load only in the functions that use them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.processes import run_python

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "numpy",
    "pyarrow",
    "scipy",
    "pandas",
    "sklearn",
    "statsmodels",
    "krippendorff",
    "openai",
    "httpx2",
    "soundfile",
    "boto3",
    "botocore",
    "PIL",
    "drf_spectacular.views",
)

# What gunicorn does (import the WSGI module, which loads the URLconf), then what requests do
# with the URLconf; prints the heavy libraries that were loaded.
WEB = """
import mmooc_site.wsgi
from django.urls import resolve, reverse
assert resolve(reverse("api_review_claim", args=[1])).url_name == "api_review_claim"
assert resolve("/api/reviews/").url_name == "api_reviews"
assert reverse("judging:leaderboard", args=[3]) == "/datasets/3/leaderboard/"
assert resolve(reverse("review:workbench", args=[5])).kwargs == {"sample_id": 5}
"""

# What a Celery worker imports when it starts: Django and every task module.
WORKER = """
import django
django.setup()
from celery import current_app
current_app.loader.import_default_modules()
assert {"annotation.run_import_job", "judging.run_judge_chunk"} <= set(current_app.tasks)
"""

REPORT = "\nimport json, sys\nprint(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))\n"


def _loaded(code: str, tmp_path: Path, **extra: str) -> list[str]:
    """The heavy libraries that a fresh Python process running ``code`` has loaded."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
        "DEBUG": "0",
        "SECRET_KEY": "lean-imports-test-" + "x" * 40,
        "VAR_DIR": str(tmp_path),
        "CELERY_BROKER_URL": "memory://",
        **extra,
    }
    result = run_python(code + REPORT.format(heavy=HEAVY), env, timeout=120)
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout.strip().splitlines()[-1]))


def test_the_web_application_loads_no_heavy_library(tmp_path: Path) -> None:
    """Importing the WSGI application (which loads the URL configuration) and resolving and
    reversing URLs loads neither numpy, pyarrow, scipy, the openai SDK, soundfile, boto3,
    Pillow, the statistics libraries nor drf-spectacular's schema view. (redis-py does load:
    the API's rate limit counts through it, about 20 MB, shared by the workers under
    ``--preload``.)"""
    assert _loaded(WEB, tmp_path) == []


# What a web process does with Redis on ordinary requests: /healthz/ (the broker and the
# cache answer) and the API's rate limit.
SERVING = """
from types import SimpleNamespace
from django.test import Client
from django.conf import settings
from core.throttling import UserRateThrottle
assert settings.CACHES["default"]["BACKEND"].endswith("RedisCache")
health = Client().get("/healthz/").json()
assert health["checks"]["broker"] == health["checks"]["cache"] == "ok", health
caller = SimpleNamespace(user=SimpleNamespace(is_authenticated=True, pk=-1))
assert UserRateThrottle().allow_request(caller, None)
"""


@pytest.mark.redis
def test_serving_with_redis_loads_no_heavy_library(tmp_path: Path) -> None:
    """With the cache and the broker on Redis, /healthz/ and the API's rate limit (redis-py
    through Django's cache) load none of the heavy libraries either."""
    url = os.environ["REDIS_URL"]
    assert _loaded(WEB + SERVING, tmp_path, REDIS_URL=url, CELERY_BROKER_URL=url) == []


def test_a_worker_loading_its_task_modules_loads_no_heavy_library(tmp_path: Path) -> None:
    """A Celery worker at rest (Django set up, every task module imported) holds none of them
    either: a task loads what it needs when it runs."""
    assert _loaded(WORKER, tmp_path) == []


# What the launcher (mmooc_site/launch.py) loads before it forks the web and the worker.
LAUNCHER = """
from mmooc_site.launch import preload
preload(web=True, worker=True)
"""


def test_the_launcher_loads_no_heavy_library(tmp_path: Path) -> None:
    """The launcher's preload (the web's modules and the worker's, shared by every process
    forked from it) holds none of them either."""
    assert _loaded(LAUNCHER, tmp_path) == []


def test_the_check_sees_a_heavy_library_that_a_module_loads(tmp_path: Path) -> None:
    """The probe does report a heavy library once something imports it."""
    assert _loaded(WEB + "import judging.audit.report\n", tmp_path) == ["numpy", "scipy"]
