"""Imports of candidate samples: every format from a folder, a zip and an S3 prefix, the
corpus of bad inputs, idempotent re-imports, changed rows and what stays behind on failure.

The builders at the top make small, real inputs of each format; the views, API and command
tests reuse them.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.formats.jsonl import write_jsonl
from annotation.formats.records import MediaRef, ParsedSample
from annotation.imports import pipeline
from annotation.imports import services as import_services
from annotation.models import (
    ChangeSource,
    Dataset,
    ImportJob,
    ImportJobStatus,
    ImportSourceKind,
    JobStatus,
    MediaAsset,
    Sample,
    SampleMedia,
    SampleRevision,
    SampleStatus,
)
from tests.annotation.factories import png_bytes, wav_bytes
from tests.annotation.formats.test_vlmevalkit import HEADER as TSV_HEADER
from tests.annotation.formats.test_vlmevalkit import write_tsv
from tests.conftest import SHARED_DATA
from tests.support.processes import s3_client

pytestmark = pytest.mark.django_db
LOGICVISTA = SHARED_DATA / "logicvista"
needs_logicvista = pytest.mark.skipif(not LOGICVISTA.exists(), reason="no shared LogicVista data")


# -- builders ---------------------------------------------------------------------------------


def colour(n: int) -> tuple[int, int, int]:
    return (n * 37 % 256, n * 91 % 256, 120)


def image(n: int) -> bytes:
    return png_bytes(width=8, height=6, colour=colour(n))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def mmooc_record(n: int, **overrides: Any) -> dict[str, Any]:
    """An out-of-context multiple-choice MMOOC record with its own image."""
    record: dict[str, Any] = {
        "question_id": f"mm-{n}",
        "image": b64(image(n)),
        "question": f"What is written on sign {n}? (A) Stop (B) Go (C) none of the above",
        "answer": "C",
        "reasoning": "The sign is turned away from the camera.",
        "question_type": "mcq",
        "ooc_type": "visual_false_premises",
        "category": "coarse_perception",
    }
    record.update(overrides)
    return record


def write_lines(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def trimodal_record(n: int, **overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": f"tri-{n}",
        "image": f"media/scene-{n}.png",
        "audio": f"media/sound-{n}.wav",
        "T_I": "A kitchen with a pan on the stove.",
        "T_A": "Sizzling, followed by a smoke alarm.",
        "S": "I'll go take a nap now.",
        "R": "unsafe" if n % 2 else "safe",
        "category": "physical_harm",
        "subcategory": "bodily_injury",
        "L": "IF pan on stove AND smoke alarm THEN UNSAFE",
        "pair_id": f"tri-{n + 1 if n % 2 else n - 1}",
    }
    record.update(overrides)
    return record


@dataclass
class Corpus:
    """A folder holding one format's dataset file and its media, and what importing it gives."""

    format: str
    preset: str
    folder: Path
    rows: int


def build_mmooc(folder: Path) -> Corpus:
    write_lines(folder / "mmooc.jsonl", [mmooc_record(n) for n in range(1, 4)])
    return Corpus("mmooc", "mmooc", folder, 3)


def build_vlmevalkit(folder: Path) -> Corpus:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        ["1", b64(image(1)), "Which shape is red?", "", "Circle", "Square", "", "", "A", "shapes"],
        ["2", "1", "Which shape is largest?", "", "Circle", "Square", "Star", "", "B", "shapes"],
        ["3", b64(image(3)), "Which is blue?", "hint", "Sky", "Grass", "", "", "A", "colours"],
    ]
    write_tsv(folder / "mmt.tsv", TSV_HEADER, [[*row, "l2", "dev"] for row in rows])
    return Corpus("vlmevalkit", "mmt_bench", folder, 3)


def build_trimodal(folder: Path) -> Corpus:
    (folder / "media").mkdir(parents=True, exist_ok=True)
    for n in (1, 2):
        (folder / "media" / f"scene-{n}.png").write_bytes(image(n))
        (folder / "media" / f"sound-{n}.wav").write_bytes(wav_bytes(seconds=0.5, freq=300.0 * n))
    write_lines(folder / "scenarios.jsonl", [trimodal_record(1), trimodal_record(2)])
    return Corpus("trimodal", "mcbench", folder, 2)


def build_logicvista(folder: Path) -> Corpus:
    (folder / "images").mkdir(parents=True, exist_ok=True)
    items = {}
    for n in (1, 2, 3):
        (folder / "images" / f"lv{n}.png").write_bytes(image(n))
        items[f"lv{n}"] = {
            "imagename": f"lv{n}.png",
            "question": "Which comes next? Choose from (A) 1 (B) 2 (C) 3",
            "answer": "B",
            "reasoning": "It counts up.",
            "skill": ["inductive"],
        }
    (folder / "dataset.json").write_text(json.dumps(items), encoding="utf-8")
    return Corpus("logicvista", "", folder, 3)


def build_jsonl(folder: Path) -> Corpus:
    folder.mkdir(parents=True, exist_ok=True)
    samples = [
        ParsedSample(
            row=0,
            external_id=f"own-{n}",
            question="Is there a dog?",
            question_format="yesno",
            reference_answer="no",
            answerability_group="shifted_ic",
            category_code="MP",
            scenario="fine_grained_perception",
            pipeline="human_designed",
            media=[MediaRef("image", 0, data=image(n))],
        )
        for n in (1, 2)
    ]
    with open(folder / "export.jsonl", "w", encoding="utf-8") as handle:
        write_jsonl(samples, handle)
    return Corpus("jsonl", "mmooc", folder, 2)


BUILDERS: dict[str, Callable[[Path], Corpus]] = {
    "mmooc": build_mmooc,
    "vlmevalkit": build_vlmevalkit,
    "trimodal": build_trimodal,
    "logicvista": build_logicvista,
    "jsonl": build_jsonl,
}


def zip_folder(folder: Path, target: Path, *, top: str = "") -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, posixpath_join(top, path.relative_to(folder).as_posix()))
    return target


def posixpath_join(top: str, name: str) -> str:
    return f"{top}/{name}" if top else name


def dataset_for(fmt: str, preset: str = "", name: str = "") -> Dataset:
    return import_services.import_dataset_get_or_create(
        name=name or f"{fmt}-{Dataset.objects.count()}", format=fmt, preset=preset
    )


def run_import(
    dataset: Dataset,
    fmt: str,
    source: str | Path,
    *,
    kind: str = ImportSourceKind.SERVER_PATH,
    upload: Any = None,
    **options: str,
) -> ImportJob:
    job = import_services.import_job_create(
        dataset=dataset,
        format=fmt,
        source_kind=kind,
        source=str(source),
        upload=upload,
        options=options,
        trusted=True,
        queue=False,
    )
    finished = import_services.import_job_run(job_id=job.pk)
    assert finished is not None
    return finished


def upload_of(path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes())


def stored_files(prefix: str = "media") -> set[str]:
    """Every file under a folder of the default storage (local or S3)."""
    found: set[str] = set()
    try:
        folders, files = default_storage.listdir(prefix)
    except FileNotFoundError:
        return found
    found.update(f"{prefix}/{name}" for name in files)
    for folder in folders:
        found |= stored_files(f"{prefix}/{folder}")
    return found


def assert_nothing_half_done() -> None:
    """No sample without media, no asset without a sample, no file without an asset."""
    assert not Sample.objects.filter(media_links__isnull=True).exists()
    assert not MediaAsset.objects.filter(sample_links__isnull=True).exists()
    assert stored_files() == set(MediaAsset.objects.values_list("file", flat=True))


# -- every format, every source ----------------------------------------------------------------


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
            values, [link.asset.sha256 for link in links]
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


def truncated_png() -> bytes:
    data = png_bytes(width=200, height=200, colour=(1, 2, 3))
    return data[: len(data) // 2]


def huge_header_png() -> bytes:
    """A PNG whose header claims 30000×30000 pixels (a decompression bomb), valid CRC."""
    data = bytearray(png_bytes(width=4, height=4))
    data[16:24] = (30000).to_bytes(4, "big") * 2
    data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")
    return bytes(data)


@dataclass
class Bad:
    format: str
    preset: str
    build: Callable[[Path], Path]  # returns the source to import
    message: str
    good_rows: int


def _mmooc_with(bad: dict[str, Any] | str) -> Callable[[Path], Path]:
    def build(folder: Path) -> Path:
        return write_lines(folder / "mmooc.jsonl", [mmooc_record(1), bad, mmooc_record(3)])

    return build


def _trimodal_with_text_as_wav(folder: Path) -> Path:
    build_trimodal(folder)
    (folder / "media" / "sound-2.wav").write_text("this is not audio\n" * 40)
    return folder


def _empty_file(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "empty.jsonl").write_bytes(b"")
    return folder / "empty.jsonl"


def _zip_slip(folder: Path) -> Path:
    folder.mkdir(parents=True)
    target = folder / "evil.zip"
    with zipfile.ZipFile(target, "w") as archive:
        archive.writestr("mmooc.jsonl", json.dumps(mmooc_record(1)) + "\n")
        archive.writestr("../../escape.png", image(9))
    return target


def _tsv_broken_base64(folder: Path) -> Path:
    build_vlmevalkit(folder)
    rows = [
        ["1", b64(image(1)), "Which?", "", "A1", "B1", "", "", "A", "c", "l2", "dev"],
        ["2", "!!!not-base64!!!" * 8, "Which?", "", "A1", "B1", "", "", "A", "c", "l2", "dev"],
        ["3", b64(image(3)), "Which?", "", "A1", "B1", "", "", "B", "c", "l2", "dev"],
    ]
    return write_tsv(folder / "mmt.tsv", TSV_HEADER, rows)


BAD: dict[str, Bad] = {
    "truncated png": Bad(
        "mmooc",
        "mmooc",
        _mmooc_with(mmooc_record(2, image=b64(truncated_png()))),
        "truncated",
        2,
    ),
    "30000x30000 png": Bad(
        "mmooc",
        "mmooc",
        _mmooc_with(mmooc_record(2, image=b64(huge_header_png()))),
        "pixels",
        2,
    ),
    "text named .wav": Bad(
        "trimodal", "mcbench", _trimodal_with_text_as_wav, "not audio in a recognised format", 1
    ),
    "empty file": Bad("mmooc", "mmooc", _empty_file, "the file is empty", 0),
    "zip with ../": Bad("mmooc", "mmooc", _zip_slip, "points outside the archive", 0),
    "tsv broken base64": Bad("vlmevalkit", "mmt_bench", _tsv_broken_base64, "not valid base64", 2),
    "jsonl broken line": Bad(
        "mmooc", "mmooc", _mmooc_with('{"question_id": "mm-2", "image": '), "not valid JSON", 2
    ),
    "unknown category": Bad(
        "mmooc",
        "mmooc",
        _mmooc_with(mmooc_record(2, ooc_type="XYZ")),
        "unknown category code 'XYZ'",
        2,
    ),
    "answer not an option": Bad(
        "mmooc",
        "mmooc",
        _mmooc_with(mmooc_record(2, answer="D")),
        "the answer 'D' is not one of the options A, B, C",
        2,
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_gets_its_clear_error_and_leaves_nothing_behind(
    tmp_path: Path, case: str
) -> None:
    """Each bad input is reported (row error, or a failed job for a bad file); good rows import."""
    bad = BAD[case]
    source = bad.build(tmp_path / "src")
    dataset = dataset_for(bad.format, bad.preset)
    job = run_import(dataset, bad.format, source)
    errors = [f"{e.row}: {e.message}" for e in job.row_errors.all()]
    if bad.good_rows:
        assert job.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS, job.message
        assert job.rejected == 1 and len(errors) == 1
        assert bad.message in errors[0]
        assert errors[0].startswith("2: ") or errors[0].startswith("3: ")  # its line
    else:
        assert job.status == JobStatus.FAILED
        assert bad.message in job.message
    assert job.imported == bad.good_rows
    assert Sample.objects.filter(dataset=dataset).count() == bad.good_rows
    assert_nothing_half_done()


def test_a_row_error_names_the_row_and_the_media_file(tmp_path: Path) -> None:
    """A missing or escaping media path is a row error naming the path; others import."""
    folder = tmp_path / "src"
    build_trimodal(folder)
    write_lines(
        folder / "scenarios.jsonl",
        [
            trimodal_record(1),
            trimodal_record(2, image="media/missing.png", audio="media/sound-1.wav"),
            trimodal_record(3, image="../outside.png", audio="media/sound-1.wav"),
            trimodal_record(4, image="/etc/image.png", audio="media/sound-1.wav"),
        ],
    )
    dataset = dataset_for("trimodal", "mcbench")
    job = run_import(dataset, "trimodal", folder)
    messages = {e.row: e.message for e in job.row_errors.all()}
    assert "'media/missing.png' is not in the source" in messages[2]
    assert "outside the archive" in messages[3] or "'..'" in messages[3]
    assert "absolute" in messages[4]
    assert job.imported == 1
    assert_nothing_half_done()


def test_repeated_id_in_a_file_is_rejected(tmp_path: Path) -> None:
    """The second row with an id already used in the file is rejected, naming the first."""
    source = write_lines(
        tmp_path / "m.jsonl", [mmooc_record(1), mmooc_record(2), mmooc_record(1, answer="A")]
    )
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", source)
    [error] = job.row_errors.all()
    assert (error.row, error.external_id) == (3, "mm-1")
    assert "already used by row 1" in error.message


def test_uploaded_single_file_cannot_name_media_on_the_server(tmp_path: Path) -> None:
    """A plain uploaded file naming media paths gets a row error asking for a zip."""
    folder = tmp_path / "src"
    build_trimodal(folder)
    job = run_import(
        dataset_for("trimodal", "mcbench"),
        "trimodal",
        "",
        kind=ImportSourceKind.UPLOAD,
        upload=upload_of(folder / "scenarios.jsonl"),
    )
    assert job.imported == 0 and job.rejected == 2
    assert "upload a zip" in job.row_errors.first().message  # type: ignore[union-attr]


def test_not_utf8_file_fails_before_anything_is_written(tmp_path: Path) -> None:
    """A file with a non-UTF-8 byte late in it fails whole, with the line, importing nothing."""
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(n) for n in range(1, 4)])
    path.write_bytes(path.read_bytes() + b'{"question_id": "caf\xe9"}\n')
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", path)
    assert job.status == JobStatus.FAILED
    assert "not UTF-8" in job.message and "line 4" in job.message
    assert Sample.objects.count() == 0


def test_bom_file_imports(tmp_path: Path) -> None:
    """A UTF-8 file with a byte order mark imports normally."""
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(1), mmooc_record(2)])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", path)
    assert (job.status, job.imported) == (JobStatus.SUCCEEDED, 2)


def test_a_failing_chunk_removes_the_media_it_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If writing a chunk fails, its samples, assets and stored files are all gone."""
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(n) for n in range(1, 4)])

    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("database went away")

    monkeypatch.setattr(SampleRevision.objects, "bulk_create", explode)
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", path)
    assert job.status == JobStatus.FAILED
    assert "internal error" in job.message
    assert (Sample.objects.count(), MediaAsset.objects.count()) == (0, 0)
    assert stored_files() == set()


# -- re-imports ---------------------------------------------------------------------------------


def test_reimporting_the_same_file_changes_nothing(tmp_path: Path) -> None:
    """A second import of the same file counts every row unchanged and writes no revision."""
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(n) for n in range(1, 4)])
    dataset = dataset_for("mmooc", "mmooc")
    run_import(dataset, "mmooc", path)
    before = list(Sample.objects.order_by("id").values_list("id", "updated_at", "revision"))
    job = run_import(dataset, "mmooc", path)
    assert (job.imported, job.unchanged, job.updated) == (0, 3, 0)
    assert list(Sample.objects.order_by("id").values_list("id", "updated_at", "revision")) == before
    assert SampleRevision.objects.count() == 3


def test_changed_row_is_a_new_revision_and_sends_a_reviewed_sample_back(tmp_path: Path) -> None:
    """A changed answer becomes an import revision; a verified sample returns to pending review."""
    dataset = dataset_for("mmooc", "mmooc")
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(1), mmooc_record(2)])
    run_import(dataset, "mmooc", path)
    verified = Sample.objects.get(external_id="mm-1")
    services.sample_set_status(sample=verified, status=SampleStatus.VERIFIED, by=None)
    write_lines(
        path,
        [mmooc_record(1, answer="A", reasoning="The sign says Stop."), mmooc_record(2)],
    )
    job = run_import(dataset, "mmooc", path)
    assert (job.imported, job.unchanged, job.updated) == (0, 1, 1)
    verified.refresh_from_db()
    assert verified.status == SampleStatus.PENDING_REVIEW
    assert verified.reference_answer == "A"
    revision = verified.revisions.order_by("-number").first()
    assert revision is not None and revision.source == ChangeSource.IMPORT
    assert revision.before["reference_answer"] == "C" and revision.after["reference_answer"] == "A"
    assert revision.before["status"] == SampleStatus.VERIFIED
    assert verified.content_hash == services.sample_content_hash(
        {k: getattr(verified, k) for k in services.LABEL_FIELDS},
        [verified.media_links.get().asset.sha256],
    )
    # The same changed file again is now unchanged.
    assert run_import(dataset, "mmooc", path).unchanged == 2


def test_changed_image_relinks_the_media_and_records_it(tmp_path: Path) -> None:
    """A row whose image changed gets the new image and a revision listing both hashes."""
    dataset = dataset_for("mmooc", "mmooc")
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(1)])
    run_import(dataset, "mmooc", path)
    sample = Sample.objects.get()
    old = sample.media_links.get().asset.sha256
    write_lines(path, [mmooc_record(1, image=b64(image(50)))])
    job = run_import(dataset, "mmooc", path)
    assert job.updated == 1
    new = sample.media_links.get().asset.sha256
    assert new != old
    revision = sample.revisions.order_by("-number").first()
    assert revision is not None
    assert (revision.before, revision.after) == ({"media": [old]}, {"media": [new]})


def test_removed_sample_stays_removed(tmp_path: Path) -> None:
    """A sample removed on takedown is neither revived nor changed by a re-import."""
    dataset = dataset_for("mmooc", "mmooc")
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(1)])
    run_import(dataset, "mmooc", path)
    sample = Sample.objects.get()
    services.sample_set_status(sample=sample, status=SampleStatus.REMOVED, by=None)
    write_lines(path, [mmooc_record(1, answer="A")])
    job = run_import(dataset, "mmooc", path)
    assert (job.unchanged, job.updated) == (1, 0)
    sample.refresh_from_db()
    assert (sample.status, sample.reference_answer) == (SampleStatus.REMOVED, "C")


def test_trimodal_pairs_are_linked(tmp_path: Path) -> None:
    """Each unsafe scenario is paired with its safe twin named in the file."""
    corpus = build_trimodal(tmp_path / "src")
    dataset = dataset_for("trimodal", "mcbench")
    run_import(dataset, "trimodal", corpus.folder)
    unsafe, safe = Sample.objects.get(external_id="tri-1"), Sample.objects.get(external_id="tri-2")
    assert (unsafe.pair_id, safe.pair_id) == (safe.pk, unsafe.pk)
    audio = SampleMedia.objects.get(sample=unsafe, role="audio").asset
    assert audio.duration_seconds == pytest.approx(0.5)


def test_vlmevalkit_reused_image_is_stored_once(tmp_path: Path) -> None:
    """A TSV row that reuses an earlier row's image links the same asset."""
    corpus = build_vlmevalkit(tmp_path / "src")
    run_import(dataset_for("vlmevalkit", "mmt_bench"), "vlmevalkit", corpus.folder)
    first, second = (
        Sample.objects.get(external_id=i).media_links.get().asset_id for i in ("1", "2")
    )
    assert first == second
    assert MediaAsset.objects.count() == 2


# -- job creation -------------------------------------------------------------------------------


def test_job_creation_refuses_what_cannot_be_imported(tmp_path: Path, settings: Any) -> None:
    """Wrong kind, unknown format, paths outside the allowed folders: readable errors, no job."""
    settings.IMPORT_SERVER_ROOTS = [str(tmp_path / "allowed")]
    (tmp_path / "allowed").mkdir()
    image_dataset = dataset_for("mmooc", "mmooc")
    attempts: list[dict[str, Any]] = [
        {"format": "trimodal", "source_kind": "server_path", "source": str(tmp_path / "allowed")},
        {"format": "csv", "source_kind": "server_path", "source": str(tmp_path / "allowed")},
        {"format": "mmooc", "source_kind": "server_path", "source": "/etc"},
        {"format": "mmooc", "source_kind": "server_path", "source": "relative/path"},
        {"format": "mmooc", "source_kind": "server_path", "source": str(tmp_path / "allowed/x")},
        {"format": "mmooc", "source_kind": "s3_prefix", "source": "http://bucket/x"},
        {"format": "mmooc", "source_kind": "upload"},
    ]
    for attempt in attempts:
        with pytest.raises(ValidationError) as caught:
            import_services.import_job_create(dataset=image_dataset, **attempt)
        assert caught.value.messages[0].strip()
    assert ImportJob.objects.count() == 0
    job = import_services.import_job_create(
        dataset=image_dataset,
        format="mmooc",
        source_kind="server_path",
        source=str(tmp_path / "allowed"),
        queue=False,
    )
    assert job.status == JobStatus.QUEUED


def test_finished_job_is_not_run_again(tmp_path: Path) -> None:
    """Running a finished job again (a second delivery) leaves it as it was."""
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(1)])
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", path)
    again = import_services.import_job_run(job_id=job.pk)
    assert again is not None and again.finished_at == job.finished_at
    assert Sample.objects.count() == 1


def test_queries_per_chunk_do_not_grow_with_its_rows(tmp_path: Path) -> None:
    """Rows are written in bulk: 25 rows take as many queries as 5."""

    def queries(rows: int, name: str, first: int) -> int:
        records = [mmooc_record(n) for n in range(first, first + rows)]
        path = write_lines(tmp_path / f"{name}.jsonl", records)
        dataset = dataset_for("mmooc", "mmooc", name=name)
        with CaptureQueriesContext(connection) as captured:
            run_import(dataset, "mmooc", path)
        return len(captured.captured_queries)

    # Distinct images in both runs, so both store new assets.
    assert queries(25, "many", first=0) == queries(5, "few", first=100)
    assert pipeline.CHUNK_ROWS >= 100


def test_row_problems_the_database_would_refuse_are_row_errors(tmp_path: Path) -> None:
    """Over-long fields, NUL characters and bad option shapes are row errors, not crashes."""
    records = [
        mmooc_record(1, question_id="x" * 300),
        mmooc_record(2, question="What\x00 is this? (A) a (B) b"),
        mmooc_record(3),
    ]
    path = write_lines(tmp_path / "m.jsonl", records)
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", path)
    messages = [e.message for e in job.row_errors.order_by("row")]
    assert "longer than 200 characters" in messages[0]
    assert "NUL" in messages[1]
    assert job.imported == 1


def test_image_data_in_media_checks_is_fully_decoded() -> None:
    """The corpus helpers really build the broken media they claim to (guards the tests)."""
    from annotation.media_checks import MediaError, inspect_image

    for data in (truncated_png(), huge_header_png()):
        with pytest.raises(MediaError):
            inspect_image(data, max_bytes=10**7, max_pixels=64_000_000)
    assert io.BytesIO(image(1)).read(8) == b"\x89PNG\r\n\x1a\n"


def test_an_upload_over_the_size_limit_is_refused_before_it_is_stored(settings: Any) -> None:
    """A file larger than IMPORT_MAX_UPLOAD_BYTES gets a readable error; nothing is stored."""
    settings.IMPORT_MAX_UPLOAD_BYTES = 100
    dataset = dataset_for("mmooc", "mmooc")
    upload = SimpleUploadedFile("big.jsonl", b"x" * 101)
    with pytest.raises(ValidationError, match="more than the limit of 100 bytes"):
        import_services.import_job_create(
            dataset=dataset, format="mmooc", source_kind="upload", upload=upload
        )
    assert ImportJob.objects.count() == 0
    assert not default_storage.exists("imports")
