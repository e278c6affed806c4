"""Hostile rows are rows: in every import format, a row holding a NUL character, nested past
the API's 100 levels (150, 1,000 and 100,000 deep) or with a field longer than
SAMPLE_MAX_TEXT_CHARS is rejected with its reason, and the rest of the file imports.

These rows used to end the whole job as an internal error (PostgreSQL refused the NUL in the
stored rejection, json raised RecursionError) or were imported whole (a 60-million-character
question)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.formats import labelstudio as ls
from annotation.formats.jsonl import dump_sample
from annotation.imports import services as import_services
from annotation.imports.jobs import import_stored_job_create, import_upload_store
from annotation.models import (
    ImportJob,
    ImportJobStatus,
    ImportKind,
    ImportRowError,
    Sample,
)
from annotation.snapshots.exports.parquet import write_parquet
from annotation.snapshots.exports.records import ExportMedia, ExportRecord
from judging.imports import services as judging_imports
from judging.models import ModelResponse, Verdict
from tests.annotation.factories import wav_bytes
from tests.annotation.formats.test_vlmevalkit import HEADER as TSV_HEADER
from tests.annotation.formats.test_vlmevalkit import write_tsv
from tests.annotation.imports_support import (
    assert_nothing_half_done,
    b64,
    dataset_for,
    image,
    mmooc_record,
    run_import,
    trimodal_record,
    write_lines,
    yes_no_sample,
)
from tests.judging.factories import bulk_samples

pytestmark = pytest.mark.django_db

NUL = "stop\x00sign"
DEPTHS = (150, 1_000, 100_000)
LIMIT = 65_536  # SAMPLE_MAX_TEXT_CHARS's default
HUGE = "x" * (LIMIT + 1)


def deep(depth: int) -> str:
    """JSON text of lists nested ``depth`` levels deep (json.dumps cannot make it)."""
    return "[" * depth + "]" * depth


def with_raw(record: dict[str, Any], key: str, raw: str) -> str:
    """A JSON line: the record plus ``key`` holding the raw JSON text ``raw``."""
    return json.dumps(record)[:-1] + f', "{key}": {raw}}}'


def rejections(job: ImportJob) -> list[str]:
    return list(ImportRowError.objects.filter(job=job).values_list("message", flat=True))


def assert_rows_rejected(job: ImportJob, *, imported: int, expected: list[str]) -> None:
    """The job ended with errors (not failed), imported the good rows and gave one rejection
    per hostile row, each with its reason; no stored message holds a NUL."""
    assert job.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS, job.message
    assert job.imported == imported, rejections(job)
    messages = rejections(job)
    assert job.rejected == len(messages) == len(expected), messages
    for message, reason in zip(messages, expected, strict=True):
        assert reason in message, (reason, message)
    assert not any("\x00" in m for m in messages)
    ids = ImportRowError.objects.filter(job=job).values_list("external_id", flat=True)
    assert not any("\x00" in i for i in ids)


NUL_REASON = "NUL character"
DEEP_REASON = "nested more than 100 levels deep"
LONG_REASON = f"longer than {LIMIT} characters"
DEEP_REASONS = [DEEP_REASON] * len(DEPTHS)


def test_mmooc_json_lines(tmp_path: Path) -> None:
    lines: list[Any] = [mmooc_record(1), mmooc_record(2, question=NUL)]
    lines += [with_raw(mmooc_record(10 + i), "meta", deep(d)) for i, d in enumerate(DEPTHS)]
    lines += [mmooc_record(20, question=HUGE), mmooc_record(21, **{"k\x00": 1}), mmooc_record(3)]
    job = run_import(
        dataset_for("mmooc", "mmooc"), "mmooc", write_lines(tmp_path / "m.jsonl", lines)
    )
    assert_rows_rejected(
        job, imported=2, expected=[NUL_REASON, *DEEP_REASONS, LONG_REASON, NUL_REASON]
    )
    assert set(Sample.objects.values_list("external_id", flat=True)) == {"mm-1", "mm-3"}
    assert_nothing_half_done()


def test_hostile_first_lines_do_not_make_the_file_another_format(tmp_path: Path) -> None:
    """Two hostile first lines are JSON, so the file is still JSON lines (not refused whole)."""
    lines: list[Any] = [mmooc_record(1, question=NUL), with_raw(mmooc_record(2), "m", deep(5000))]
    path = write_lines(tmp_path / "m.jsonl", [*lines, mmooc_record(3)])
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", path)
    assert_rows_rejected(job, imported=1, expected=[NUL_REASON, DEEP_REASON])


def test_mmooc_parquet(tmp_path: Path) -> None:
    """Parquet's schema bounds its nesting; NUL and size are checked as in JSON lines."""
    records = [mmooc_record(n, image=image(n)) | {"note": "-"} for n in (1, 2, 3, 4)]
    records[1]["question"] = NUL
    records[2]["question"] = HUGE
    records[3]["note"] = "a\x00b"
    path = tmp_path / "ooc.parquet"
    pq.write_table(pa.Table.from_pylist([*records, mmooc_record(5, image=image(5))]), path)
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", path)
    assert_rows_rejected(job, imported=2, expected=[NUL_REASON, LONG_REASON, NUL_REASON])


def test_trimodal_json_lines(tmp_path: Path) -> None:
    (tmp_path / "media").mkdir()
    for n in range(1, 8):
        (tmp_path / "media" / f"scene-{n}.png").write_bytes(image(n))
        (tmp_path / "media" / f"sound-{n}.wav").write_bytes(wav_bytes(seconds=0.2))
    lines: list[Any] = [trimodal_record(1), trimodal_record(3, S=NUL)]
    lines += [with_raw(trimodal_record(4 + i), "meta", deep(d)) for i, d in enumerate(DEPTHS)]
    lines += [trimodal_record(7, T_I=HUGE), trimodal_record(2)]
    path = write_lines(tmp_path / "scenarios.jsonl", lines)
    job = run_import(dataset_for("trimodal", "mcbench"), "trimodal", path)
    assert_rows_rejected(job, imported=2, expected=[NUL_REASON, *DEEP_REASONS, LONG_REASON])


def test_the_sites_own_json_lines(tmp_path: Path) -> None:
    lines: list[Any] = [dump_sample(yes_no_sample(1, "own-1"))]
    lines.append(dump_sample(yes_no_sample(2, "own-2", explanation=NUL)))
    lines += [
        with_raw(json.loads(dump_sample(yes_no_sample(3 + i, f"own-{3 + i}"))), "x", deep(d))
        for i, d in enumerate(DEPTHS)
    ]
    lines.append(dump_sample(replace(yes_no_sample(6, "own-6"), question=HUGE)))
    lines.append(dump_sample(yes_no_sample(7, "own-7", extra={"notes": HUGE})))
    lines.append(dump_sample(yes_no_sample(8, "own-8")))
    job = run_import(
        dataset_for("jsonl", "mmooc"), "jsonl", write_lines(tmp_path / "e.jsonl", lines)
    )
    assert_rows_rejected(
        job,
        imported=2,
        expected=[NUL_REASON, *DEEP_REASONS, LONG_REASON, f"'extra.notes' is {LONG_REASON}"],
    )


def _release_record(n: int, **labels: Any) -> ExportRecord:
    data = image(n)
    sha = hashlib.sha256(data).hexdigest()
    fields = {
        "question": "Is there a dog?",
        "question_format": "yesno",
        "reference_answer": "no",
        "answerability_group": "shifted_ic",
        "category_code": "MP",
        "scenario": "fine_grained_perception",
        "pipeline": "human_designed",
    }
    return ExportRecord(
        external_id=f"rel-{n}",
        labels=fields | labels,
        content_hash="x",
        media=[ExportMedia("image", 0, sha, "image/png", ".png", read=lambda: data)],
        extra={"slot": f"EXTRA-{n}"},
    )


def test_the_sites_own_parquet_release(tmp_path: Path) -> None:
    """The release Parquet (also a Hugging Face folder's file): its extra column is JSON text,
    read with the same limits."""
    path = tmp_path / "release.parquet"
    records = [_release_record(1), _release_record(2, question=NUL), _release_record(3)]
    records += [_release_record(4 + i) for i in range(len(DEPTHS))]
    records.append(_release_record(7, explanation=HUGE))
    records.append(_release_record(8))
    write_parquet(records, path)
    table = pq.read_table(path)
    rows = table.to_pylist()
    for i, depth in enumerate(DEPTHS):
        rows[3 + i]["extra"] = '{"slot": ' + deep(depth) + "}"
    rows[2]["extra"] = '{"slot": "a\\u0000b"}'
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    job = run_import(dataset_for("release", "mmooc"), "release", path)
    assert_rows_rejected(
        job, imported=2, expected=[NUL_REASON, NUL_REASON, *DEEP_REASONS, LONG_REASON]
    )


def test_vlmevalkit_tsv(tmp_path: Path) -> None:
    def row(index: str, question: str = "Which shape is red?", **cells: str) -> list[str]:
        values = {"index": index, "image": b64(image(int(index[-1]))), "question": question}
        values |= {"A": "Circle", "B": "Square", "answer": "A", "category": "shapes"}
        return [{**values, **cells}.get(name, "") for name in [*TSV_HEADER, "generator_models"]]

    rows = [row("1"), row("2", NUL), row("x\x003")]
    rows += [row(f"d{i}", generator_models=deep(d)) for i, d in enumerate(DEPTHS, start=4)]
    rows += [row("7", HUGE), row("8")]
    path = write_tsv(tmp_path / "mmt.tsv", [*TSV_HEADER, "generator_models"], rows)
    job = run_import(dataset_for("vlmevalkit", "mmt_bench"), "vlmevalkit", path)
    assert_rows_rejected(
        job, imported=2, expected=[NUL_REASON, NUL_REASON, *DEEP_REASONS, LONG_REASON]
    )
    stored = ImportRowError.objects.filter(job=job).values_list("external_id", flat=True)
    assert "x\\u00003" in stored


def _logicvista_item(n: int, **fields: Any) -> str:
    item = {
        "imagename": f"lv{n}.png",
        "question": "Which comes next? Choose from (A) 1 (B) 2 (C) 3",
        "answer": "B",
        "reasoning": "It counts up.",
        "skill": ["inductive"],
    }
    return json.dumps(item | fields)


def test_logicvista_json(tmp_path: Path) -> None:
    """The whole document is one JSON object: an item too deep for the parser is refused
    alone, the document's other items import."""
    (tmp_path / "images").mkdir()
    for n in range(1, 9):
        (tmp_path / "images" / f"lv{n}.png").write_bytes(image(n))
    items = [f'"lv1": {_logicvista_item(1)}', f'"lv2": {_logicvista_item(2, question=NUL)}']
    items += [
        f'"lv{3 + i}": {_logicvista_item(3 + i)[:-1]}, "meta": {deep(d)}}}'
        for i, d in enumerate(DEPTHS)
    ]
    items += [f'"lv6": {_logicvista_item(6, reasoning=HUGE)}', '"lv\\u00007": {}']
    items.append(f'"lv8": {_logicvista_item(8)}')
    (tmp_path / "dataset.json").write_text("{" + ", ".join(items) + "}", encoding="utf-8")
    job = run_import(dataset_for("logicvista"), "logicvista", tmp_path)
    assert_rows_rejected(
        job, imported=2, expected=[NUL_REASON, *DEEP_REASONS, LONG_REASON, NUL_REASON]
    )


def test_label_studio_json(tmp_path: Path) -> None:
    def task(n: int, **data: Any) -> str:
        fields = {"question": "Is it red?", "reference_answer": "yes", "image": "x.png"}
        return json.dumps({"id": n, "data": fields | data, "annotations": []})

    tasks = [task(1), task(2, question=NUL)]
    tasks += [task(3 + i)[:-1] + f', "meta": {deep(d)}}}' for i, d in enumerate(DEPTHS)]
    tasks += [task(6, question=HUGE), task(7)]
    path = tmp_path / "export.json"
    path.write_text("[" + ", ".join(tasks) + "]", encoding="utf-8")
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(path, "export.json")
        bundle.writestr("x.png", image(1))
    source, name = import_upload_store(SimpleUploadedFile("export.zip", archive.read_bytes()))
    mapping = ls.LsMapping(
        {"question": "question", "reference_answer": "reference_answer", "image": "image"}, {}
    )
    job = import_stored_job_create(
        dataset=dataset_for("labelstudio"),
        kind=ImportKind.SAMPLES,
        format="labelstudio",
        source=source,
        source_name=name,
        options=mapping.as_options(),
    )
    done = import_services.import_job_run(job_id=job.pk)
    assert done is not None
    assert_rows_rejected(done, imported=2, expected=[NUL_REASON, *DEEP_REASONS, LONG_REASON])


# -- model responses and verdicts (judging's imports, on the same job rows) ---------------------


def _run_upload(job: ImportJob) -> ImportJob:
    done = judging_imports.judging_import_job_run(job_id=job.pk)
    assert done is not None
    return done


def _hostile_lines(good: list[dict[str, Any]], make: Any) -> bytes:
    lines: list[str] = [json.dumps(good[0]), json.dumps(make("bulk-1", NUL))]
    lines += [with_raw(make(f"bulk-{2 + i}", "x"), "meta", deep(d)) for i, d in enumerate(DEPTHS)]
    lines.append(json.dumps(good[1]))
    return ("\n".join(lines) + "\n").encode()


def test_model_responses_json_lines() -> None:
    dataset = dataset_for("mmooc", "mmooc")
    bulk_samples(dataset, 6)

    def make(sample: str, text: str) -> dict[str, Any]:
        return {"id": sample, "model": "m", "response": text}

    data = _hostile_lines([make("bulk-0", "A"), make("bulk-5", "B")], make)
    job = judging_imports.response_upload_create(
        dataset=dataset, format="jsonl", upload=SimpleUploadedFile("r.jsonl", data), model="m"
    )
    assert_rows_rejected(_run_upload(job), imported=2, expected=[NUL_REASON, *DEEP_REASONS])
    assert ModelResponse.objects.count() == 2


def test_logicvista_answer_files() -> None:
    dataset = dataset_for("mmooc", "mmooc")
    bulk_samples(dataset, 6)
    items = ['"bulk-0": {"answer": "A"}', '"bulk-1": {"answer": "' + "\\u0000" + '"}']
    items += [f'"bulk-{2 + i}": {{"answer": "B", "m": {deep(d)}}}' for i, d in enumerate(DEPTHS)]
    items.append('"bulk-5": {"answer": "C"}')
    data = ("{" + ", ".join(items) + "}").encode()
    job = judging_imports.response_upload_create(
        dataset=dataset, format="logicvista", upload=SimpleUploadedFile("m-answers.json", data)
    )
    assert_rows_rejected(_run_upload(job), imported=2, expected=[NUL_REASON, *DEEP_REASONS])


def test_vlmevalkit_prediction_tables(tmp_path: Path) -> None:
    dataset = dataset_for("mmooc", "mmooc")
    bulk_samples(dataset, 3)
    path = tmp_path / "m_MMOOC.tsv"
    rows = [["bulk-0", "A", "Q"], ["bulk-1", "a\x00b", "Q"], ["bulk-2", "C", "Q"]]
    write_tsv(path, ["index", "prediction", "question"], rows)
    job = judging_imports.response_upload_create(
        dataset=dataset,
        format="vlmevalkit",
        upload=SimpleUploadedFile(path.name, path.read_bytes()),
        model="m",
    )
    assert_rows_rejected(_run_upload(job), imported=2, expected=[NUL_REASON])


def test_verdicts_json_lines() -> None:
    dataset = dataset_for("mmooc", "mmooc")
    bulk_samples(dataset, 6)

    def make(sample: str, text: str) -> dict[str, Any]:
        return {"sample_id": sample, "judge": "o3", "label": "answerable", "rationale": text}

    data = _hostile_lines([make("bulk-0", "ok"), make("bulk-5", "ok")], make)
    job = judging_imports.verdict_upload_create(
        dataset=dataset, upload=SimpleUploadedFile("v.jsonl", data)
    )
    assert_rows_rejected(_run_upload(job), imported=2, expected=[NUL_REASON, *DEEP_REASONS])
    assert Verdict.objects.count() == 2


JUDGING_LIMIT = 262_144  # JUDGING_ROW_MAX_CHARS's default
JUDGING_LONG_REASON = f"longer than {JUDGING_LIMIT} characters"


def test_model_responses_longer_than_the_limit_are_rows() -> None:
    """A response (or its row's other fields) over JUDGING_ROW_MAX_CHARS rejects its row,
    through the reader every response format shares; one at the limit imports."""
    dataset = dataset_for("mmooc", "mmooc")
    bulk_samples(dataset, 4)
    rows = [
        {"id": "bulk-0", "model": "m", "response": "A"},
        {"id": "bulk-1", "model": "m", "response": "x" * (JUDGING_LIMIT + 1)},
        {"id": "bulk-2", "model": "m", "response": "B", "trace": "y" * JUDGING_LIMIT},
        {"id": "bulk-3", "model": "m", "response": "z" * JUDGING_LIMIT},
    ]
    data = ("\n".join(json.dumps(r) for r in rows) + "\n").encode()
    job = judging_imports.response_upload_create(
        dataset=dataset, format="jsonl", upload=SimpleUploadedFile("r.jsonl", data), model="m"
    )
    expected = [JUDGING_LONG_REASON] * 2
    assert_rows_rejected(_run_upload(job), imported=2, expected=expected)
    stored = ModelResponse.objects.values_list("sample__external_id", flat=True)
    assert sorted(stored) == ["bulk-0", "bulk-3"]


def test_verdict_lines_longer_than_the_limit_are_rows() -> None:
    dataset = dataset_for("mmooc", "mmooc")
    bulk_samples(dataset, 2)
    line = {"sample_id": "bulk-0", "judge": "o3", "label": "answerable", "rationale": "ok"}
    long = line | {"sample_id": "bulk-1", "rationale": "r" * JUDGING_LIMIT}
    data = (json.dumps(line) + "\n" + json.dumps(long) + "\n").encode()
    job = judging_imports.verdict_upload_create(
        dataset=dataset, upload=SimpleUploadedFile("v.jsonl", data)
    )
    assert_rows_rejected(_run_upload(job), imported=1, expected=[JUDGING_LONG_REASON])
    assert Verdict.objects.count() == 1
