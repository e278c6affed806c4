"""The embedded run (README's run command) keeps its data in SQLite: imports must work there too.

The suite runs on PostgreSQL; this module runs the gold-flag import tests, which use the JSON
lookups that differ between the two databases, again in a child pytest on a SQLite file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_imports_with_gold_flags_pass_on_sqlite(tmp_path: Path) -> None:
    """An import that flags gold items finishes on SQLite (no JSON containment lookup there)."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'embedded.sqlite3'}"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-x",
            "tests/review/gold/test_import.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert " passed" in result.stdout
