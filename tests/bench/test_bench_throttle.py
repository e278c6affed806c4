"""The throttle bench (bench/bench_throttle.py) runs at a tiny size and counts what it says."""

from __future__ import annotations

import json
import os

import pytest

from tests.support.processes import run_python

pytestmark = pytest.mark.redis


def test_the_throttle_bench_measures_both_throttles() -> None:
    """Both throttles are measured; the site's makes one round trip per call, DRF's two."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DJANGO_SETTINGS_MODULE", "CACHE_KEY_PREFIX", "API_THROTTLE_USER"}
    }
    argv = ["bench_throttle", "--redis", os.environ["REDIS_URL"], "--calls", "20", "--rounds", "1"]
    code = (
        f"import sys; sys.argv = {argv!r}; import runpy; "
        "runpy.run_path('bench/bench_throttle.py', run_name='__main__')"
    )
    result = run_python(code, env, timeout=120)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["site"]["round_trips_per_call"] == 1.0
    assert figures["drf"]["round_trips_per_call"] == 2.0
    assert figures["calls"] == 20 and figures["site"]["us_per_call"] > 0
