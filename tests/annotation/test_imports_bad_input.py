"""Imports that must refuse or change carefully: the corpus of bad inputs (a clear error,
nothing left behind), idempotent re-imports, changed rows, and the rules of import jobs."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.imports import pipeline, writes
from annotation.imports import services as import_services
from annotation.models import (
    ChangeSource,
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
from core import bulk
from tests.annotation.formats.test_vlmevalkit import HEADER as TSV_HEADER
from tests.annotation.formats.test_vlmevalkit import write_tsv
from tests.annotation.imports_support import (
    assert_nothing_half_done,
    b64,
    build_trimodal,
    build_vlmevalkit,
    dataset_for,
    huge_header_png,
    image,
    mmooc_record,
    run_import,
    stored_files,
    trimodal_record,
    truncated_png,
    upload_of,
    write_lines,
)

pytestmark = pytest.mark.django_db


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

    original = bulk.rows_insert_values

    def explode(model: Any, names: Any, rows: Any) -> list[int]:
        if model is SampleRevision:  # after the assets, samples and links are written
            raise RuntimeError("database went away")
        return original(model, names, rows)

    monkeypatch.setattr(writes, "rows_insert_values", explode)
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
        verified.extra,
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


def test_an_id_repeated_in_a_later_chunk_is_rejected_naming_its_first_row(tmp_path: Path) -> None:
    """The ids of earlier chunks are kept out of memory, in the database, and still found:
    a later chunk's repeat is rejected naming the first row, whether the first was imported
    or rejected, and an id of any text is matched exactly."""
    from annotation.imports.pipeline import CHUNK_ROWS

    records: list[Any] = [mmooc_record(n) for n in range(CHUNK_ROWS + 3)]
    records[1] = mmooc_record(1, question_type="bogus")
    records[2] = mmooc_record(2, question_id="ü ✓ 题")
    records[CHUNK_ROWS] = mmooc_record(0, answer="A")
    records[CHUNK_ROWS + 1] = mmooc_record(1)
    records[CHUNK_ROWS + 2] = mmooc_record(2, question_id="ü ✓ 题")
    job = run_import(
        dataset_for("mmooc", "mmooc"), "mmooc", write_lines(tmp_path / "m.jsonl", records)
    )
    messages = {e.row: e.message for e in job.row_errors.all()}
    assert "already used by row 1 " in messages[CHUNK_ROWS + 1] + " "
    assert "already used by row 2 " in messages[CHUNK_ROWS + 2] + " "
    assert "already used by row 3 " in messages[CHUNK_ROWS + 3] + " "
    assert 2 in messages
