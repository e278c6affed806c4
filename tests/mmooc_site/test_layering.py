"""The layering contracts of pyproject.toml ([tool.importlinter]) hold, and they do catch a
wrong import."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "accounts", "annotation", "review", "judging", "mmooc_site")
LINT = Path(sys.executable).parent / "lint-imports"


def _lint(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--no-cache"], cwd=folder, capture_output=True, text=True, check=False
    )


def test_the_project_keeps_every_contract() -> None:
    """lint-imports passes on the project as it is."""
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout


def test_judging_importing_review_breaks_the_independence_contract(tmp_path: Path) -> None:
    """A copy of the project where judging imports review fails the check, naming the contract."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    apps = tmp_path / "judging" / "apps.py"
    apps.write_text(apps.read_text() + "\nfrom review import models  # noqa: E402,F401\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "review and judging are independent BROKEN" in result.stdout
