"""The harness-import benchmark (bench/bench_harness_import.py) runs at a tiny size: both
uploads end succeeded with every response and verdict stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.processes import ROOT

pytestmark = pytest.mark.postgres


def test_the_benchmark_runs_at_a_tiny_size() -> None:
    base = os.environ["DATABASE_URL"].rpartition("/")[0]
    env = {**os.environ, "DATABASE_URL": f"{base}/bench_harness_tiny"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "bench/bench_harness_import.py", "--samples", "30"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["responses"] == 60 and result["verdicts"] == 30 * 2 + 30
    assert result["lmms_eval"]["rows"] == 30 and result["vlmevalkit"]["rows"] == 60
