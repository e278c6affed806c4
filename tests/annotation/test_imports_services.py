"""Imports of candidate samples: every format from a folder, a zip and an S3 prefix, and the
real LogicVista items. The builders are in ``imports_support``; the bad inputs, re-imports
and job rules in ``test_imports_bad_input``."""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.storage import default_storage

from annotation import services
from annotation.models import (
    ChangeSource,
    ImportSourceKind,
    JobStatus,
    MediaAsset,
    Sample,
    SampleStatus,
)
from tests.annotation.imports_support import (
    BUILDERS,
    LOGICVISTA,
    assert_nothing_half_done,
    dataset_for,
    image,
    mmooc_record,
    needs_logicvista,
    run_import,
    upload_of,
    write_lines,
    zip_folder,
)
from tests.support.processes import s3_client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("fmt", list(BUILDERS))
def test_each_format_imports_from_a_folder(tmp_path: Path, fmt: str) -> None:
    """Every row of each format becomes a sample with its media, first revision and hash."""
    corpus = BUILDERS[fmt](tmp_path / "src")
    dataset = dataset_for(fmt, corpus.preset)
    job = run_import(dataset, fmt, corpus.folder)
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert (job.total_rows, job.rows_done, job.imported, job.rejected) == (
        corpus.rows,
        corpus.rows,
        corpus.rows,
        0,
    )
    samples = Sample.objects.filter(dataset=dataset)
    assert samples.count() == corpus.rows
    for sample in samples:
        links = list(sample.media_links.order_by("role", "position").select_related("asset"))
        assert links
        values = {name: getattr(sample, name) for name in services.LABEL_FIELDS}
        assert sample.content_hash == services.sample_content_hash(
            values, [link.asset.sha256 for link in links], sample.extra
        )
        [revision] = sample.revisions.all()
        assert revision.source == ChangeSource.IMPORT and revision.number == 1
        assert sample.status == SampleStatus.IMPORTED
    assert_nothing_half_done()


@pytest.mark.parametrize("fmt", list(BUILDERS))
def test_each_format_imports_from_an_uploaded_zip(tmp_path: Path, fmt: str) -> None:
    """A zip upload (wrapped in a top folder) imports like the folder, and the upload is removed."""
    corpus = BUILDERS[fmt](tmp_path / "src")
    archive = zip_folder(corpus.folder, tmp_path / "upload.zip", top="release")
    dataset = dataset_for(fmt, corpus.preset)
    job = run_import(dataset, fmt, "", kind=ImportSourceKind.UPLOAD, upload=upload_of(archive))
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert job.imported == corpus.rows and job.rejected == 0
    assert job.source_name == "upload.zip"
    assert not default_storage.exists(job.source)
    assert_nothing_half_done()


def s3_put_folder(endpoint: str, bucket: str, prefix: str, folder: Path) -> None:
    client = s3_client(endpoint)
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            client.put_object(
                Bucket=bucket,
                Key=f"{prefix}/{path.relative_to(folder).as_posix()}",
                Body=path.read_bytes(),
            )


@pytest.fixture
def s3_source(settings: Any, s3_endpoint: str, s3_storage: str) -> Callable[[Path], str]:
    """Put a folder under a prefix of the test bucket and give its s3:// address."""
    settings.S3_ENDPOINT_URL = s3_endpoint
    settings.S3_REGION = "us-east-1"
    settings.S3_ACCESS_KEY_ID = "test"
    settings.S3_SECRET_ACCESS_KEY = "test"

    def put(folder: Path) -> str:
        s3_put_folder(s3_endpoint, s3_storage, "incoming/batch-1", folder)
        return f"s3://{s3_storage}/incoming/batch-1"

    return put


@pytest.mark.s3
@pytest.mark.parametrize("fmt", list(BUILDERS))
def test_each_format_imports_from_an_s3_prefix(
    tmp_path: Path, fmt: str, s3_source: Callable[[Path], str]
) -> None:
    """A dataset file and its media under an S3 prefix import, with media stored on S3."""
    corpus = BUILDERS[fmt](tmp_path / "src")
    dataset = dataset_for(fmt, corpus.preset)
    job = run_import(dataset, fmt, s3_source(corpus.folder), kind=ImportSourceKind.S3_PREFIX)
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert job.imported == corpus.rows
    asset = MediaAsset.objects.first()
    assert asset is not None and default_storage.exists(asset.file.name)
    assert_nothing_half_done()


def test_mmooc_parquet_with_image_bytes_imports(tmp_path: Path) -> None:
    """A released MMOOC Parquet file (images as bytes) imports every row."""
    records = [mmooc_record(n) | {"image": image(n)} for n in range(1, 6)]
    path = tmp_path / "ooc.parquet"
    pq.write_table(pa.Table.from_pylist(records), path)
    dataset = dataset_for("mmooc", "mmooc")
    job = run_import(dataset, "mmooc", path)
    assert (job.status, job.total_rows, job.imported) == (JobStatus.SUCCEEDED, 5, 5)
    assert Sample.objects.get(external_id="mm-3").category_code == "VFP"


@needs_logicvista
def test_all_161_real_logicvista_items_import_and_the_empty_one_is_explained(
    tmp_path: Path,
) -> None:
    """160 real items import with their images; item v1_382 is rejected with its reasons."""
    dataset = dataset_for("logicvista")
    job = run_import(dataset, "logicvista", LOGICVISTA)
    assert (job.total_rows, job.imported, job.rejected) == (161, 160, 1)
    [error] = job.row_errors.all()
    assert error.external_id == "v1_382"
    assert "the question is empty" in error.message
    sample = Sample.objects.get(dataset=dataset, external_id="v1_287")
    assert (sample.media_links.get().asset.width or 0) > 0
    again = run_import(dataset, "logicvista", LOGICVISTA)
    assert (again.imported, again.unchanged, again.updated, again.rejected) == (0, 160, 0, 1)
    assert_nothing_half_done()


@needs_logicvista
def test_real_logicvista_imports_from_a_zip_upload(tmp_path: Path) -> None:
    """The real LogicVista folder, zipped and uploaded, imports the same 160 items."""
    archive = tmp_path / "logicvista.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(LOGICVISTA / "dataset.json", "logicvista/dataset.json")
        for path in sorted((LOGICVISTA / "images").iterdir()):
            zipped.write(path, f"logicvista/images/{path.name}")
    dataset = dataset_for("logicvista")
    job = run_import(
        dataset, "logicvista", "", kind=ImportSourceKind.UPLOAD, upload=upload_of(archive)
    )
    assert (job.imported, job.rejected) == (160, 1)


@needs_logicvista
@pytest.mark.s3
def test_real_logicvista_imports_from_an_s3_prefix(
    tmp_path: Path, s3_source: Callable[[Path], str]
) -> None:
    """The real LogicVista folder under an S3 prefix imports the same 160 items."""
    folder = tmp_path / "lv"
    shutil.copytree(LOGICVISTA, folder, ignore=shutil.ignore_patterns("answers", "LICENSE"))
    dataset = dataset_for("logicvista")
    job = run_import(dataset, "logicvista", s3_source(folder), kind=ImportSourceKind.S3_PREFIX)
    assert (job.imported, job.rejected) == (160, 1), job.message


# -- the corpus of bad inputs -------------------------------------------------------------------


def test_each_chunk_commits_without_waiting_for_the_wal_flush(tmp_path: Path) -> None:
    """On PostgreSQL each chunk's transaction turns synchronous_commit off for itself only
    (SET LOCAL): the job's counts commit with the chunk, so a resumed job redoes a lost one."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(n) for n in range(1, 4)])
    with CaptureQueriesContext(connection) as captured:
        job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", path)
    assert job.status == JobStatus.SUCCEEDED
    statements = [q["sql"] for q in captured.captured_queries]
    assert statements.count("SET LOCAL synchronous_commit = off") == 1  # one chunk
