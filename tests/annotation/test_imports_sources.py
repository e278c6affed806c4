"""Server-path imports read only files whose real path, every link resolved, lies under
IMPORT_SERVER_ROOTS: a symlink inside an allowed folder that points out is refused with a
message; the operator's own command (trusted) still reads any path."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from annotation.imports import services as import_services
from annotation.imports.formats import FORMATS
from annotation.imports.sources import SourceError, open_local
from annotation.models import ImportJob, ImportJobStatus, ImportSourceKind, JobStatus, Sample
from tests.annotation.imports_support import (
    build_mmooc,
    build_trimodal,
    dataset_for,
    run_import,
)

pytestmark = pytest.mark.django_db

LINK_MESSAGE = "link to a place outside the folders imports may read from"


@pytest.fixture
def allowed(tmp_path: Path, settings: Any) -> Path:
    """An allowed folder, with a secret file outside it that links may point to."""
    root = tmp_path / "allowed"
    root.mkdir()
    settings.IMPORT_SERVER_ROOTS = [str(root)]
    return root


def _site_import(dataset_format: str, preset: str, source: Path) -> ImportJob:
    """An import as a lead starts it (not trusted), run to its end."""
    job = import_services.import_job_create(
        dataset=dataset_for(dataset_format, preset),
        format=dataset_format,
        source_kind=ImportSourceKind.SERVER_PATH,
        source=str(source),
        queue=False,
    )
    finished = import_services.import_job_run(job_id=job.pk)
    assert finished is not None
    return finished


def test_a_symlinked_dataset_file_pointing_outside_is_refused(
    allowed: Path, tmp_path: Path
) -> None:
    """A folder under the roots whose dataset file links outside: the job fails, says why,
    and imports nothing."""
    outside = build_mmooc(tmp_path / "outside").folder / "mmooc.jsonl"
    (allowed / "set").mkdir()
    (allowed / "set" / "mmooc.jsonl").symlink_to(outside)
    job = _site_import("mmooc", "mmooc", allowed / "set")
    assert job.status == JobStatus.FAILED
    assert LINK_MESSAGE in job.message and "IMPORT_SERVER_ROOTS" in job.message
    assert str(outside) not in job.message
    assert Sample.objects.count() == 0


def test_a_file_named_directly_that_links_outside_is_refused_at_creation(
    allowed: Path, tmp_path: Path
) -> None:
    """Naming the symlinked file itself: refused before any job is recorded."""
    outside = build_mmooc(tmp_path / "outside").folder / "mmooc.jsonl"
    (allowed / "link.jsonl").symlink_to(outside)
    with pytest.raises(ValidationError, match="allowed only under"):
        _site_import("mmooc", "mmooc", allowed / "link.jsonl")
    assert ImportJob.objects.count() == 0


def test_a_symlinked_media_file_pointing_outside_is_a_row_error(
    allowed: Path, tmp_path: Path
) -> None:
    """A media file that links outside rejects its row with a message; the others import."""
    corpus = build_trimodal(allowed / "tri")
    secret = tmp_path / "secret.png"
    shutil.move(corpus.folder / "media" / "scene-2.png", secret)
    (corpus.folder / "media" / "scene-2.png").symlink_to(secret)
    job = _site_import("trimodal", "mcbench", corpus.folder)
    assert job.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS
    assert job.imported == 1 and job.rejected == 1
    (error,) = job.row_errors.all()
    assert "media/scene-2.png" in error.message and "is a link to a file outside" in error.message


def test_a_symlinked_subfolder_pointing_outside_is_refused(allowed: Path, tmp_path: Path) -> None:
    """A subfolder that is a link out of the roots cannot smuggle the dataset file in, whether
    its folder or the subfolder itself is named."""
    outside = build_mmooc(tmp_path / "outside").folder
    (allowed / "set").mkdir()
    (allowed / "set" / "sub").symlink_to(outside, target_is_directory=True)
    job = _site_import("mmooc", "mmooc", allowed / "set")
    assert job.status == JobStatus.FAILED
    with pytest.raises(ValidationError, match="allowed only under"):
        _site_import("mmooc", "mmooc", allowed / "set" / "sub")
    assert Sample.objects.count() == 0


def test_a_folder_swapped_for_a_link_after_creation_is_refused_at_run(
    allowed: Path, tmp_path: Path
) -> None:
    """The check is made again when the job runs, not only when it is created."""
    build_mmooc(allowed / "set")
    job = import_services.import_job_create(
        dataset=dataset_for("mmooc", "mmooc"),
        format="mmooc",
        source_kind=ImportSourceKind.SERVER_PATH,
        source=str(allowed / "set"),
        queue=False,
    )
    shutil.rmtree(allowed / "set")
    (allowed / "set").symlink_to(build_mmooc(tmp_path / "outside").folder)
    finished = import_services.import_job_run(job_id=job.pk)
    assert finished is not None and finished.status == JobStatus.FAILED
    assert LINK_MESSAGE in finished.message


def test_links_that_stay_inside_the_roots_are_read(allowed: Path) -> None:
    """A link from one allowed folder to another file under the roots is fine."""
    corpus = build_mmooc(allowed / "real")
    (allowed / "set").mkdir()
    (allowed / "set" / "mmooc.jsonl").symlink_to(corpus.folder / "mmooc.jsonl")
    job = _site_import("mmooc", "mmooc", allowed / "set")
    assert job.status == JobStatus.SUCCEEDED and job.imported == corpus.rows


def test_the_operators_command_still_reads_any_path(allowed: Path, tmp_path: Path) -> None:
    """A trusted job (the import_samples command) follows links anywhere, as before."""
    outside = build_mmooc(tmp_path / "outside").folder / "mmooc.jsonl"
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "mmooc.jsonl").symlink_to(outside)
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", tmp_path / "elsewhere")
    assert job.trusted and job.status == JobStatus.SUCCEEDED and job.imported == 3


def test_open_local_with_roots_checks_the_file_itself(tmp_path: Path) -> None:
    """open_local refuses a single file whose real path leaves the roots it is given."""
    outside = build_mmooc(tmp_path / "outside").folder / "mmooc.jsonl"
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "m.jsonl").symlink_to(outside)
    with (
        pytest.raises(SourceError, match=LINK_MESSAGE),
        open_local(tmp_path / "root" / "m.jsonl", FORMATS["mmooc"], roots=[tmp_path / "root"]),
    ):
        pass
    with open_local(tmp_path / "root" / "m.jsonl", FORMATS["mmooc"]) as opened:
        assert opened.dataset_path == outside.resolve() and opened.name == "m.jsonl"
