"""Tests for the thin ``manage.py agreement`` command (needs configured Django settings)."""

import json
from io import StringIO
from pathlib import Path

import pytest

django_settings = pytest.importorskip("django.conf").settings


@pytest.fixture(autouse=True)
def _needs_django() -> None:
    try:
        configured = django_settings.configured and bool(django_settings.INSTALLED_APPS)
    except Exception:  # settings module not importable while the project is being built
        configured = False
    if not configured:
        pytest.skip("Django settings are not configured")


def test_command_prints_one_json_object(tmp_path: Path) -> None:
    """The command prints the report as a single JSON object."""
    from django.core.management import call_command

    path = tmp_path / "r.csv"
    path.write_text("item,rater,label\na,x,1\na,y,1\nb,x,2\nb,y,1\nc,x,2\nc,y,2\n")
    out = StringIO()
    call_command("agreement", str(path), "--bootstrap", "50", "--seed", "1", stdout=out)
    report = json.loads(out.getvalue())
    assert report["n_items"] == 3 and "x|y" in report["cohen_kappa_pairwise"]


def test_bad_file_is_a_command_error(tmp_path: Path) -> None:
    """A bad file raises CommandError carrying the readable message, not a traceback."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    path = tmp_path / "bad.csv"
    path.write_text("a,b\n")
    with pytest.raises(CommandError, match="line 1: expected the header"):
        call_command("agreement", str(path))
