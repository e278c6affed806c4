"""python manage.py import_samples: creates the dataset, imports inline, prints a summary and
exits non-zero when any row was rejected.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Dataset, DatasetKind, Sample, TaxonomyTerm
from tests.annotation.imports_support import (
    LOGICVISTA,
    build_trimodal,
    mmooc_record,
    write_lines,
)

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("import_samples", *args, stdout=out)
    return out.getvalue()


def test_clean_file_creates_the_dataset_with_its_kind_and_preset(tmp_path: Path) -> None:
    """A tri-modal import creates a tri-modal dataset with the MCBench terms and succeeds."""
    corpus = build_trimodal(tmp_path / "src")
    output = run(
        str(corpus.folder), "--dataset", "MCBench", "--format", "trimodal", "--preset", "mcbench"
    )
    dataset = Dataset.objects.get(name="MCBench")
    assert dataset.kind == DatasetKind.TRIMODAL
    assert TaxonomyTerm.objects.filter(dataset=dataset, code="physical_harm").exists()
    assert "imported:  2" in output and "rejected:  0" in output
    again = run(str(corpus.folder), "--dataset", "MCBench", "--format", "trimodal")
    assert "unchanged: 2" in again


def test_rejected_rows_are_listed_and_the_command_fails(tmp_path: Path) -> None:
    """Each rejected row is printed with its line, id and reason; the exit status is 1."""
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(1), mmooc_record(2, ooc_type="XYZ")])
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 rows were rejected"):
        call_command(
            "import_samples",
            str(path),
            "--dataset",
            "mm",
            "--format",
            "mmooc",
            "--preset",
            "mmooc",
            stdout=out,
        )
    assert "row 2 (mm-2): unknown category code 'XYZ'" in out.getvalue()
    assert Dataset.objects.get(name="mm").kind == DatasetKind.IMAGE_QUESTION
    assert Sample.objects.count() == 1


def test_a_bad_source_fails_with_its_reason(tmp_path: Path) -> None:
    """A missing path or an empty file ends the command with a readable error."""
    with pytest.raises(CommandError, match="no file or folder"):
        run(str(tmp_path / "absent.jsonl"), "--dataset", "x", "--format", "mmooc")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(CommandError, match="the file is empty"):
        run(str(empty), "--dataset", "x", "--format", "mmooc")


@pytest.mark.skipif(not LOGICVISTA.exists(), reason="no shared LogicVista data")
def test_real_logicvista_folder(tmp_path: Path) -> None:
    """The 161 real items: 160 imported, v1_382 rejected, so the command fails."""
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command(
            "import_samples",
            str(LOGICVISTA),
            "--dataset",
            "LogicVista",
            "--format",
            "logicvista",
            stdout=out,
        )
    assert "imported:  160" in out.getvalue() and "v1_382" in out.getvalue()
