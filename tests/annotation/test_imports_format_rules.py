"""Imports that fit their format: the format's preset and kind for a new dataset, its own
closed vocabularies, one message for a file of another kind, every problem of a row at
once, no empty dataset left by a failed import, and a job status that tells how it ended.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.formats.jsonl import write_jsonl
from annotation.formats.records import MediaRef, ParsedSample
from annotation.imports import services as import_services
from annotation.models import (
    Dataset,
    DatasetKind,
    ImportJob,
    ImportJobStatus,
    Sample,
    TaxonomyTerm,
)
from annotation.snapshots.exports.parquet import write_parquet
from annotation.snapshots.exports.records import ExportMedia, ExportRecord
from tests.annotation.factories import wav_bytes
from tests.annotation.imports_support import (
    LOGICVISTA,
    build_mmooc,
    build_trimodal,
    build_vlmevalkit,
    dataset_for,
    image,
    mmooc_record,
    run_import,
    trimodal_record,
    write_lines,
)
from tests.annotation.test_imports_views import _client
from tests.conftest import client_for
from tests.support.html import element, elements, text

pytestmark = pytest.mark.django_db
needs_logicvista = pytest.mark.skipif(not LOGICVISTA.exists(), reason="no shared LogicVista data")


def command(*args: str) -> str:
    out = io.StringIO()
    call_command("import_samples", *args, stdout=out)
    return out.getvalue()


# -- a new dataset gets the format's preset and kind -----------------------------------------


@pytest.mark.parametrize(
    ("fmt", "build", "preset", "kind", "code"),
    [
        ("mmooc", build_mmooc, "mmooc", DatasetKind.IMAGE_QUESTION, "VFP"),
        ("vlmevalkit", build_vlmevalkit, "mmt_bench", DatasetKind.IMAGE_QUESTION, "mcq"),
        ("trimodal", build_trimodal, "mcbench", DatasetKind.TRIMODAL, "physical_harm"),
    ],
)
def test_a_dataset_created_by_an_import_gets_the_formats_preset(
    tmp_path: Path, fmt: str, build: Any, preset: str, kind: str, code: str
) -> None:
    """Without --preset, mmooc makes an MMOOC dataset, vlmevalkit MMT-Bench, trimodal MCBench."""
    corpus = build(tmp_path / "src")
    output = command(str(corpus.folder), "--dataset", "new", "--format", fmt)
    dataset = Dataset.objects.get(name="new")
    assert (dataset.preset, dataset.kind) == (preset, kind)
    assert TaxonomyTerm.objects.filter(dataset=dataset, code=code).exists()
    assert f"imported:  {corpus.rows}" in output


def test_an_explicit_preset_wins_over_the_formats(tmp_path: Path) -> None:
    """--preset names the preset of the new dataset, whatever the format's own."""
    corpus = build_mmooc(tmp_path / "src")
    command(str(corpus.folder), "--dataset", "new", "--format", "mmooc", "--preset", "mmt_bench")
    dataset = Dataset.objects.get(name="new")
    assert dataset.preset == "mmt_bench"
    assert list(dataset.terms.values_list("code", flat=True)) == ["mcq"]


def test_a_preset_that_differs_from_the_datasets_is_refused_naming_both(tmp_path: Path) -> None:
    """An existing MMOOC dataset and --preset mcbench: an error naming both, nothing imported."""
    corpus = build_mmooc(tmp_path / "src")
    dataset_for("mmooc", "mmooc", name="mm")
    with pytest.raises(CommandError) as caught:
        command(str(corpus.folder), "--dataset", "mm", "--format", "mmooc", "--preset", "mcbench")
    assert str(caught.value) == (
        "The dataset “mm” uses the taxonomy preset “mmooc”, not “mcbench”; "
        "leave the preset out or give its own."
    )
    assert (ImportJob.objects.count(), Sample.objects.count()) == (0, 0)
    # Its own preset, or none, is fine.
    command(str(corpus.folder), "--dataset", "mm", "--format", "mmooc", "--preset", "mmooc")
    assert Sample.objects.count() == 3


def trimodal_samples() -> list[ParsedSample]:
    return [
        ParsedSample(
            row=0,
            external_id=f"scene-{n}",
            image_description="A kitchen.",
            audio_description="A smoke alarm.",
            speech_utterance="I'll take a nap.",
            safety_label="unsafe",
            safety_category="physical_harm",
            predicate=["pan on stove", "smoke alarm"],
            media=[
                MediaRef("image", 0, data=image(n)),
                MediaRef("audio", 0, data=wav_bytes(seconds=0.2, freq=200.0 * n)),
            ],
        )
        for n in (1, 2)
    ]


def test_a_jsonl_export_of_trimodal_rows_makes_a_trimodal_dataset(tmp_path: Path) -> None:
    """The site's own JSON lines holding scenarios: the new dataset is tri-modal, rows import."""
    path = tmp_path / "export.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        write_jsonl(trimodal_samples(), handle)
    output = command(str(path), "--dataset", "scenes", "--format", "jsonl")
    assert Dataset.objects.get(name="scenes").kind == DatasetKind.TRIMODAL
    assert "imported:  2" in output and "rejected:  0" in output


def test_a_release_parquet_of_trimodal_rows_makes_a_trimodal_dataset(tmp_path: Path) -> None:
    """The site's own release Parquet holding scenarios: the new dataset is tri-modal."""

    def media(role: str, data: bytes, ext: str) -> ExportMedia:
        sha = hashlib.sha256(data).hexdigest()
        return ExportMedia(role, 0, sha, f"{role}/x", ext, read=lambda: data)

    records = [
        ExportRecord(
            external_id=s.external_id,
            labels={
                "image_description": s.image_description,
                "speech_utterance": s.speech_utterance,
                "safety_label": s.safety_label,
                "safety_category": s.safety_category,
                "predicate": s.predicate,
            },
            content_hash="x",
            media=[
                media("image", s.media[0].data or b"", ".png"),
                media("audio", s.media[1].data or b"", ".wav"),
            ],
        )
        for s in trimodal_samples()
    ]
    path = tmp_path / "release.parquet"
    write_parquet(records, path)
    output = command(str(path), "--dataset", "scenes", "--format", "release")
    assert Dataset.objects.get(name="scenes").kind == DatasetKind.TRIMODAL
    assert "imported:  2" in output


# -- no empty dataset is left behind -----------------------------------------------------------


def test_an_import_that_rejects_every_row_leaves_no_new_dataset(tmp_path: Path) -> None:
    """Every row rejected: the rows are listed, the job failed, and the new dataset is gone."""
    path = write_lines(
        tmp_path / "m.jsonl", [mmooc_record(1, answer=""), mmooc_record(2, answer="")]
    )
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"Every row was rejected: nothing was imported\."):
        call_command(
            "import_samples", str(path), "--dataset", "new", "--format", "mmooc", stdout=out
        )
    assert "row 1 (mm-1): the reference answer is empty" in out.getvalue()
    assert "The dataset 'new' was not kept: the import added no sample to it." in out.getvalue()
    assert not Dataset.objects.filter(name="new").exists()


def test_a_failed_import_leaves_no_new_dataset_but_keeps_an_existing_one(tmp_path: Path) -> None:
    """A missing path or an unreadable file removes the dataset it created, never an old one."""
    with pytest.raises(CommandError, match="no file or folder"):
        command(str(tmp_path / "absent.jsonl"), "--dataset", "new", "--format", "mmooc")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(CommandError, match="the file is empty"):
        command(str(empty), "--dataset", "new", "--format", "mmooc")
    assert Dataset.objects.count() == 0
    dataset_for("mmooc", "mmooc", name="old")
    with pytest.raises(CommandError, match="the file is empty"):
        command(str(empty), "--dataset", "old", "--format", "mmooc")
    assert Dataset.objects.filter(name="old").exists()


# -- a whole file of another kind gets one message ---------------------------------------------


@needs_logicvista
@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("mmooc", "MMOOC (Parquet or JSON lines)"),
        ("trimodal", "Tri-modal scenarios, MCBench (JSON lines)"),
        ("jsonl", "This site's own export (JSON lines)"),
    ],
)
def test_a_pretty_printed_json_of_another_benchmark_gets_one_file_message(
    fmt: str, expected: str
) -> None:
    """LogicVista's pretty-printed dataset.json read as JSON lines: one message naming the
    expected format, no error per line, nothing imported."""
    dataset = dataset_for(fmt, name="target")
    job = run_import(dataset, fmt, LOGICVISTA / "dataset.json")
    assert job.status == ImportJobStatus.FAILED
    assert job.message == (
        f"This is not a file of the format “{expected}”: the file is not JSON lines: neither of "
        "its first two lines is a JSON object on a line of its own (is it a pretty-printed JSON "
        "document or a file of another kind?)."
    )
    assert (job.row_errors.count(), job.imported) == (0, 0)


def test_records_of_another_benchmark_get_one_file_message(tmp_path: Path) -> None:
    """MCBench scenarios read as MMOOC, MMOOC records read as scenarios: one message each."""
    scenarios = write_lines(tmp_path / "s.jsonl", [trimodal_record(n) for n in range(1, 30)])
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", scenarios)
    assert job.status == ImportJobStatus.FAILED and job.row_errors.count() == 0
    assert job.message == (
        "This is not a file of the format “MMOOC (Parquet or JSON lines)”: its first record "
        "has no field question (it has: id, image, audio, T_I, T_A, S, R, category); an MMOOC "
        "record has question_id (or id), image, question, answer, question_type and ooc_type."
    )
    records = write_lines(tmp_path / "m.jsonl", [mmooc_record(n) for n in range(1, 30)])
    job = run_import(dataset_for("trimodal", "mcbench"), "trimodal", records)
    assert job.status == ImportJobStatus.FAILED and job.row_errors.count() == 0
    assert "Tri-modal scenarios, MCBench (JSON lines)" in job.message
    assert "a tri-modal scenario has an id, image, audio, a speech utterance (S)" in job.message


def test_a_json_array_and_a_jsonl_read_as_tsv_get_one_file_message(tmp_path: Path) -> None:
    """A JSON array read as JSON lines, MMOOC JSON lines read as a VLMEvalKit TSV."""
    array = tmp_path / "a.jsonl"
    array.write_text(json.dumps([mmooc_record(1), mmooc_record(2)]), encoding="utf-8")
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", array)
    assert job.message == (
        "This is not a file of the format “MMOOC (Parquet or JSON lines)”: the file is one "
        "JSON array, not JSON lines (one object per line)."
    )
    lines = write_lines(tmp_path / "m.tsv", [mmooc_record(n) for n in range(1, 5)])
    job = run_import(dataset_for("vlmevalkit", "mmt_bench"), "vlmevalkit", lines)
    assert job.status == ImportJobStatus.FAILED and job.row_errors.count() == 0
    assert job.message.startswith(
        "This is not a file of the format “VLMEvalKit / MMT-Bench (TSV)”: the file has no "
        "'index' column; a VLMEvalKit TSV has the columns index, image, question"
    )


def test_one_broken_first_line_is_still_only_that_rows_error(tmp_path: Path) -> None:
    """A broken first line followed by good lines is a row error, not a file of another kind."""
    path = write_lines(tmp_path / "m.jsonl", ['{"question_id": "x", ', mmooc_record(2)])
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", path)
    assert (job.status, job.imported, job.rejected) == (
        ImportJobStatus.SUCCEEDED_WITH_ERRORS,
        1,
        1,
    )
    assert "line 1: this line is not valid JSON" in job.row_errors.get().message


# -- the format's own vocabularies, and every problem at once ---------------------------------


def test_mmooc_vocabularies_are_checked_whatever_the_taxonomy(tmp_path: Path) -> None:
    """In a dataset with no taxonomy terms, an unknown question_type or ooc_type is refused."""
    dataset = dataset_for("logicvista", name="no-terms")
    assert not dataset.terms.exists()
    path = write_lines(
        tmp_path / "m.jsonl",
        [
            mmooc_record(1, question_type="essay"),
            mmooc_record(2, ooc_type="made_up_type"),
            mmooc_record(3, question_type="multiple_choice", ooc_type="MKB"),
        ],
    )
    job = run_import(dataset, "mmooc", path)
    messages = dict(job.row_errors.values_list("row", "message"))
    assert messages[1] == "unknown question_type 'essay' (known: mcq, vqa, yesno)"
    assert messages[2] == (
        "unknown category code 'made_up_type' in ooc_type (known: IQM "
        "(image_question_mismatch), MA (multimodal_ambiguity), MKB "
        "(missing_knowledge_background), MP (misleading_premise), PA (partial_answerability), "
        "ULS (unclear_logical_symbolic), USPC (uncertain_spatial_physical_context), VFP "
        "(visual_false_premises))"
    )
    assert job.imported == 1
    assert Sample.objects.get().category_code == "MKB"


def test_all_of_a_rows_problems_are_reported_at_once(tmp_path: Path) -> None:
    """Vocabulary, taxonomy, answer and a broken image: one row error listing every one."""
    path = write_lines(
        tmp_path / "m.jsonl",
        [
            mmooc_record(
                1,
                question_type="essay",
                category="underwater_basket_weaving",
                answer="",
                image="bm90IGFuIGltYWdl",  # base64 of "not an image"
            ),
            mmooc_record(2),
        ],
    )
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", path)
    error = job.row_errors.get()
    assert (error.row, error.external_id) == (1, "mm-1")
    assert error.message == (
        "unknown question_type 'essay' (known: mcq, vqa, yesno); "
        "unknown scenario 'underwater_basket_weaving' (known: coarse_perception, "
        "fine_grained_perception, instance_reasoning, logical_reasoning, math, "
        "science_and_technology); "
        "the reference answer is empty; "
        "Image 1: the file is not an image in a recognised format"
    )
    assert (job.status, job.imported) == (ImportJobStatus.SUCCEEDED_WITH_ERRORS, 1)


def test_a_missing_media_file_is_reported_with_the_rows_other_problems(tmp_path: Path) -> None:
    """A scenario with no label and a missing image file: both in one message."""
    folder = tmp_path / "src"
    build_trimodal(folder)
    write_lines(
        folder / "scenarios.jsonl",
        [trimodal_record(1, R="", image="media/gone.png"), trimodal_record(2)],
    )
    job = run_import(dataset_for("trimodal", "mcbench"), "trimodal", folder)
    assert job.row_errors.get().message == (
        "the safety label is missing (expected 'safe' or 'unsafe'); "
        "the media file 'media/gone.png' is not in the source"
    )


# -- how a job ends ----------------------------------------------------------------------------


def test_a_job_that_rejects_every_row_fails_and_one_that_rejects_some_succeeds_with_errors(
    tmp_path: Path, lead: Any
) -> None:
    """Failed when nothing was kept, "succeeded with errors" when some rows were: each with its
    own badge on the job page and the import list."""
    dataset = dataset_for("mmooc", "mmooc")
    bad = write_lines(tmp_path / "bad.jsonl", [mmooc_record(1, answer="Z")])
    failed = run_import(dataset, "mmooc", bad)
    assert failed.status == ImportJobStatus.FAILED
    assert failed.message == (
        "0 imported, 0 unchanged, 0 updated, 1 rejected. "
        "Every row was rejected: nothing was imported."
    )
    some = write_lines(tmp_path / "some.jsonl", [mmooc_record(1, answer="Z"), mmooc_record(2)])
    partial = run_import(dataset, "mmooc", some)
    assert (partial.status, partial.get_status_display()) == (
        ImportJobStatus.SUCCEEDED_WITH_ERRORS,
        "Finished with errors",
    )
    clean = run_import(dataset, "mmooc", write_lines(tmp_path / "ok.jsonl", [mmooc_record(3)]))
    assert clean.status == ImportJobStatus.SUCCEEDED
    client = _client(lead)
    listing = client.get(reverse("annotation:dataset_import", args=[dataset.pk])).content.decode()
    for job in (failed, partial, clean):
        shown = [text(span) for span in elements(listing, "span", data_status=job.status)]
        assert job.get_status_display() in shown
    page = client.get(reverse("annotation:import_job", args=[failed.pk])).content.decode()
    assert text(element(page, "span", data_status="failed")) == "Failed"
    detail = client_for(lead).get(reverse("api_import_job", args=[partial.pk])).json()
    assert (detail["status"], detail["finished"], detail["percent"]) == (
        "succeeded_with_errors",
        True,
        100,
    )


def test_the_badge_colours_differ_for_each_ending() -> None:
    """The site's CSS gives failed, succeeded with errors and succeeded their own colours."""
    from django.conf import settings

    css = (Path(settings.BASE_DIR) / "static" / "css" / "site.css").read_text(encoding="utf-8")
    colours = {
        status: css.split(f'.job-status[data-status="{status}"]', 1)[1].split("}", 1)[0]
        for status in ("failed", "succeeded_with_errors", "succeeded")
    }
    assert len(set(colours.values())) == 3


def test_import_dataset_discard_keeps_a_dataset_with_samples(tmp_path: Path) -> None:
    """Only an empty dataset is discarded."""
    dataset = dataset_for("mmooc", "mmooc")
    run_import(dataset, "mmooc", write_lines(tmp_path / "m.jsonl", [mmooc_record(1)]))
    assert import_services.import_dataset_discard(dataset=dataset) is False
    assert Dataset.objects.filter(pk=dataset.pk).exists()
