"""Model outputs straight from the evaluation harnesses (judging.formats.harness,
judging.services.harness and the upload jobs): lmms-eval --log_samples folders and VLMEvalKit
prediction and evaluated files, built as the harnesses write them, imported as responses and
as the verdicts of a judge named after the harness's metric."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.formats.records import FormatError
from annotation.models import Dataset, ImportJobStatus, ImportRowError, Sample
from judging import selectors
from judging.formats import harness
from judging.imports import services as upload_services
from judging.models import Judge, JudgeKind, ModelResponse, Verdict
from judging.services.harness import harness_import
from tests.annotation.factories import mmooc_dataset
from tests.judging.factories import bulk_samples
from tests.support.harness_files import (
    LmmsDoc,
    LmmsTask,
    vlmevalkit_run_folder,
    write_lmms_eval_log,
    write_vlmevalkit_evaluated,
    write_vlmevalkit_predictions,
)

pytestmark = pytest.mark.django_db

CHECKPOINT = "Qwen/Qwen2.5-VL-7B-Instruct"
MODEL_ARGS = f"pretrained={CHECKPOINT},max_pixels=12845056,attn_implementation=sdpa"


def mmooc_task(samples: list[Sample], *, name: str = "mmooc_ooc") -> LmmsTask:
    """An MMOOC task: process_results gives the benchmark's judge scores (answer_score,
    reasoning_score) as one metric and exact match as another."""
    docs = []
    for i, sample in enumerate(samples):
        answer = i % 2
        docs.append(
            LmmsDoc(
                doc={"question_id": sample.external_id, "question": sample.question},
                target=sample.reference_answer,
                reply=f"  The answer is {'A' if answer else 'unclear'}.\n",
                raw_reply=f"<think>hmm</think>  The answer is {'A' if answer else 'unclear'}.\n",
                metrics={
                    "mmooc_score": {
                        "question_id": sample.external_id,
                        "answer_score": answer,
                        "reasoning_score": 0.75 if answer else 0.25,
                    },
                    "exact_match": float(answer),
                },
            )
        )
    return LmmsTask(
        name=name,
        docs=docs,
        metric_list=[
            {"metric": "mmooc_score", "aggregation": "mmooc_aggregate", "higher_is_better": True},
            {"metric": "exact_match", "aggregation": "mean", "higher_is_better": True},
        ],
    )


def zip_folder(root: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return buffer.getvalue()


def files_of(root: Path) -> list[tuple[str, str]]:
    return [
        (p.relative_to(root).as_posix(), str(p)) for p in sorted(root.rglob("*")) if p.is_file()
    ]


def run_upload(dataset: Dataset, data: bytes, name: str, **kwargs: Any) -> Any:
    job = upload_services.response_upload_create(
        dataset=dataset, upload=SimpleUploadedFile(name, data), **kwargs
    )
    done = upload_services.judging_import_job_run(job_id=job.pk)
    assert done is not None
    return done


# --- the readers ---------------------------------------------------------------------


def test_lmms_eval_rows_are_read_as_the_tracker_wrote_them(tmp_path: Path) -> None:
    """The model is the checkpoint in model_args (not the model class), the response is
    filtered_resps exactly, resps (which differs) and the tracker's fields are kept, and the
    task's metrics give a full MMOOC score and an answer-only score."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 3)
    folder = write_lmms_eval_log(
        tmp_path, model="qwen2_5_vl", model_args=MODEL_ARGS, tasks=[mmooc_task(samples)]
    )
    assert folder.name == "Qwen__Qwen2.5-VL-7B-Instruct"
    plan = harness.harness_plan(files_of(tmp_path), harness.LMMS_EVAL)
    (file,) = plan.files
    assert (file.model, file.task, file.metrics, file.split) == (
        CHECKPOINT,
        "mmooc_ooc",
        ("mmooc_score", "exact_match"),
        "test",
    )
    rows = list(file.rows())
    first = rows[1]
    assert isinstance(first, harness.HarnessRow)
    assert (first.key, first.by_position, first.response) == ("1", True, "  The answer is A.\n")
    assert first.extra["resps"] == ["<think>hmm</think>  The answer is A.\n"]
    assert {"doc_hash", "input", "target", "lmms_eval_version"} <= set(first.extra)
    assert first.scores == {
        "lmms-eval mmooc_ooc mmooc_score": harness.HarnessScore(1, 0.75),
        "lmms-eval mmooc_ooc exact_match": harness.HarnessScore(1),
    }


def test_an_older_layout_matches_by_the_docs_id(tmp_path: Path) -> None:
    """Rows that still carry ``doc`` (older releases) are matched by the doc's question_id."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 2)
    write_lmms_eval_log(
        tmp_path,
        model="llava",
        model_args="pretrained=liuhaotian/llava-v1.5-7b",
        tasks=[mmooc_task(samples)],
        older_layout=True,
    )
    (file,) = harness.harness_plan(files_of(tmp_path), harness.LMMS_EVAL).files
    keys = [(r.key, r.by_position) for r in file.rows() if isinstance(r, harness.HarnessRow)]
    assert keys == [("bulk-0", False), ("bulk-1", False)]


@pytest.mark.parametrize(
    ("model_args", "expected"),
    [
        ("pretrained=lmms-lab/llava-onevision-qwen2-7b-ov,conv_template=qwen_1_5", None),
        ("pretrained=base/model,peft=me/lora-adapter", "me/lora-adapter"),
        ("model_version=gpt-4o-2024-08-06,modality=image", "gpt-4o-2024-08-06"),
        ({"pretrained": "org/ckpt", "device_map": "auto"}, "org/ckpt"),
        ("", ""),
    ],
)
def test_the_model_is_the_checkpoint_lmms_eval_names(model_args: Any, expected: str | None) -> None:
    """lmms-eval's own order of model_args keys: peft before pretrained, then model_version…"""
    found = harness.model_from_model_args(model_args)
    assert found == (expected if expected is not None else "lmms-lab/llava-onevision-qwen2-7b-ov")


@pytest.mark.parametrize(
    ("value", "score"),
    [
        (1, harness.HarnessScore(1)),
        (0.0, harness.HarnessScore(0)),
        (True, harness.HarnessScore(1)),
        ({"question_id": 3, "score": 1, "l2_category": "x"}, harness.HarnessScore(1)),
        ({"answer_score": 0, "reasoning_score": 0.5}, harness.HarnessScore(0, 0.5)),
        ({"answer_score": 1, "reasoning_score": 0.3}, None),
        (0.42, None),
        ("yes", None),
        ({"pred": "A"}, None),
    ],
)
def test_only_0_1_metrics_and_mmooc_scores_are_verdicts(value: Any, score: Any) -> None:
    """A verdict needs a 0/1 answer score (and reasoning in quarters); anything else is kept
    in the response's extra only."""
    assert harness.harness_score(value) == score


def test_formats_are_detected_by_their_shape(tmp_path: Path) -> None:
    """lmms-eval by its file names or rows, VLMEvalKit by index and prediction columns."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 2)
    lmms = tmp_path / "lmms"
    write_lmms_eval_log(lmms, model="m", model_args="pretrained=a/b", tasks=[mmooc_task(samples)])
    vlm = tmp_path / "vlm"
    write_vlmevalkit_predictions(
        vlmevalkit_run_folder(vlm, "GPT4o"),
        model="GPT4o",
        dataset="MMOOC",
        rows=[{"index": 0, "question": "q", "answer": "A"}],
        predictions={0: "A"},
    )
    assert harness.detect_format(files_of(lmms)) == harness.LMMS_EVAL
    assert harness.detect_format(files_of(vlm)) == harness.VLMEVALKIT
    with pytest.raises(FormatError, match="lmms-eval output, not VLMEvalKit"):
        harness.harness_plan(files_of(lmms), harness.VLMEVALKIT)
    with pytest.raises(FormatError, match="VLMEvalKit output, not lmms-eval"):
        harness.harness_plan(files_of(vlm), harness.LMMS_EVAL)


# --- imports -------------------------------------------------------------------------


def test_an_lmms_eval_folder_imports_responses_and_metric_verdicts(tmp_path: Path) -> None:
    """doc_id counts in the dataset's import order; each metric is an external judge beside
    the site's judges on the leaderboard; importing again changes nothing."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 4)
    write_lmms_eval_log(
        tmp_path, model="qwen2_5_vl", model_args=MODEL_ARGS, tasks=[mmooc_task(samples)]
    )
    summary = harness_import(
        dataset=dataset, files=files_of(tmp_path), format="lmms_eval", doc_order="position"
    )
    assert (summary.imported, summary.rejected) == (4, [])
    responses = ModelResponse.objects.filter(dataset=dataset).order_by("sample_id")
    assert {r.model_name for r in responses} == {CHECKPOINT}
    assert responses[1].response == "  The answer is A.\n"
    judges = Judge.objects.filter(name__startswith="lmms-eval ")
    assert {(j.name, j.kind) for j in judges} == {
        ("lmms-eval mmooc_ooc mmooc_score", JudgeKind.EXTERNAL),
        ("lmms-eval mmooc_ooc exact_match", JudgeKind.EXTERNAL),
    }
    full = Verdict.objects.get(judge__name__endswith="mmooc_score", sample=samples[1])
    assert (full.answer_score, full.reasoning_score) == (1, 0.75)
    board = selectors.leaderboard(dataset=dataset)
    (row,) = board.models
    assert row.model == CHECKPOINT
    exact = row.judges["lmms-eval mmooc_ooc exact_match"]
    assert (exact.overall.mean, exact.overall.n, exact.overall.reasoning) == (0.5, 4, None)
    assert row.judges["lmms-eval mmooc_ooc mmooc_score"].overall.mean == pytest.approx(
        (0.25 / 2 + 1.75 / 2) / 2
    )
    again = harness_import(
        dataset=dataset, files=files_of(tmp_path), format="lmms_eval", doc_order="position"
    )
    assert (again.imported, again.unchanged, again.updated) == (0, 4, 0)
    assert Verdict.objects.filter(response__dataset=dataset).count() == 8


def test_doc_ids_past_the_dataset_or_unknown_ids_are_counted_and_listed(tmp_path: Path) -> None:
    """A file whose items match no sample rejects every row with its line and reason and
    stores nothing: no response, no verdict, no judge."""
    dataset = mmooc_dataset()
    other = mmooc_dataset()
    samples = bulk_samples(other, 3)
    write_lmms_eval_log(
        tmp_path, model="m", model_args="pretrained=a/b", tasks=[mmooc_task(samples)]
    )
    summary = harness_import(
        dataset=dataset, files=files_of(tmp_path), format="lmms_eval", doc_order="position"
    )
    assert summary.imported == 0 and len(summary.rejected) == 3
    assert "doc_id 0 is past the 0 samples" in summary.rejected[0].message
    by_id = harness_import(
        dataset=dataset, files=files_of(tmp_path), format="lmms_eval", doc_order="external_id"
    )
    assert [r.row for r in by_id.rejected] == [1, 2, 3]
    assert "no sample “0”" in by_id.rejected[0].message
    assert not ModelResponse.objects.filter(dataset=dataset).exists()
    assert not Verdict.objects.filter(sample__dataset=dataset).exists()


def test_lmms_eval_needs_the_lead_to_say_what_doc_id_counts(tmp_path: Path) -> None:
    """Without a doc order, the upload is refused before a job exists and its file is not kept."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 2)
    write_lmms_eval_log(
        tmp_path, model="m", model_args="pretrained=a/b", tasks=[mmooc_task(samples)]
    )
    with pytest.raises(ValidationError, match="doc order"):
        upload_services.response_upload_create(
            dataset=dataset,
            format="auto",
            upload=SimpleUploadedFile("log.zip", zip_folder(tmp_path)),
        )
    assert not dataset.import_jobs.exists()


def test_an_upload_is_inspected_with_a_match_preview(tmp_path: Path) -> None:
    """The preview shows each doc_id's target beside the sample it would match, and how many
    targets equal the references under each order."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 5)
    write_lmms_eval_log(
        tmp_path, model="m", model_args="pretrained=a/b", tasks=[mmooc_task(samples)]
    )
    from annotation.imports.jobs import import_upload_store

    source, name = import_upload_store(SimpleUploadedFile("log.zip", zip_folder(tmp_path)))
    inspection = upload_services.response_upload_inspect(
        source=source, source_name=name, format="auto", model="", dataset=dataset
    )
    assert inspection.format == "lmms_eval" and inspection.needs_doc_order
    (preview,) = inspection.previews
    assert preview.agreement["position"] == (5, 5, 5)
    assert preview.agreement["external_id"] == (5, 0, 0)
    assert preview.rows[2].matches["position"] == ("bulk-2", samples[2].reference_answer)


def test_a_zip_of_two_models_folders_runs_as_a_job(tmp_path: Path) -> None:
    """Each model's folder is one model; the job counts rows, verdicts and ends succeeded."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 3)
    task = mmooc_task(samples)
    write_lmms_eval_log(tmp_path, model="qwen2_5_vl", model_args=MODEL_ARGS, tasks=[task])
    write_lmms_eval_log(
        tmp_path, model="llava", model_args="pretrained=liuhaotian/llava-v1.5-7b", tasks=[task]
    )
    done = run_upload(
        dataset, zip_folder(tmp_path), "outputs.zip", format="auto", doc_order="position"
    )
    assert done.status == ImportJobStatus.SUCCEEDED, done.message
    assert (done.total_rows, done.imported) == (6, 6)
    assert "12 verdicts of the harness judge lmms-eval mmooc_ooc exact_match" not in done.message
    assert "6 verdicts of the harness judge lmms-eval mmooc_ooc exact_match." in done.message
    assert set(ModelResponse.objects.values_list("model_name", flat=True)) == {
        CHECKPOINT,
        "liuhaotian/llava-v1.5-7b",
    }


def vlmevalkit_outputs(root: Path, samples: list[Sample], *, model: str = "GPT4o") -> Path:
    folder = vlmevalkit_run_folder(root, model)
    rows = [
        {
            "index": int(s.external_id),
            "question": s.question,
            "A": "yes",
            "B": "no",
            "answer": s.reference_answer,
            "category": s.category_code,
            "image": "iVBORw0KGgo=",
        }
        for s in samples
    ]
    predictions = {
        int(s.external_id): ("A" if i % 2 else "B\n(because)") for i, s in enumerate(samples)
    }
    return write_vlmevalkit_predictions(
        folder, model=model, dataset="MMOOC", rows=rows, predictions=predictions
    )


def numbered_samples(dataset: Dataset, n: int) -> list[Sample]:
    samples = bulk_samples(dataset, n)
    for i, sample in enumerate(samples):
        sample.external_id = str(i)
    Sample.objects.bulk_update(samples, ["external_id"])
    return samples


def test_a_vlmevalkit_xlsx_and_its_evaluated_file_import(tmp_path: Path) -> None:
    """The prediction file gives the responses by index (text kept), the evaluated file the
    judge's hits as verdicts, and its _score.csv is checked against them."""
    dataset = mmooc_dataset()
    samples = numbered_samples(dataset, 4)
    prediction = vlmevalkit_outputs(tmp_path, samples)
    write_vlmevalkit_evaluated(
        prediction,
        judge="gpt4o-mini",
        outcomes={i: ("A" if i % 2 else "Z", i % 2) for i in range(4)},
    )
    done = run_upload(dataset, zip_folder(tmp_path), "outputs.zip", format="auto")
    assert done.status == ImportJobStatus.SUCCEEDED, done.message
    # Four rows of predictions (responses) and four of the evaluated file (verdicts).
    assert (done.total_rows, done.imported) == (8, 8)
    responses = dict(ModelResponse.objects.values_list("sample__external_id", "response"))
    assert responses["0"] == "B\n(because)" and responses["1"] == "A"
    hits = dict(
        Verdict.objects.filter(judge__name="VLMEvalKit MMOOC gpt4o-mini").values_list(
            "sample__external_id", "answer_score"
        )
    )
    assert hits == {"0": 0, "1": 1, "2": 0, "3": 1}
    assert "its Overall hits (2 of 4) match the imported verdicts" in done.message
    (row,) = selectors.leaderboard(dataset=dataset).models
    assert row.judges["VLMEvalKit MMOOC gpt4o-mini"].overall.mean == 0.5


def test_a_vlmevalkit_xlsx_without_prediction_fails_and_stores_nothing(tmp_path: Path) -> None:
    """An xlsx missing its prediction column fails the job with a message naming the column,
    before any row of any file is stored."""
    import pandas as pd

    dataset = mmooc_dataset()
    samples = numbered_samples(dataset, 2)
    vlmevalkit_outputs(tmp_path, samples, model="AAA")
    folder = vlmevalkit_run_folder(tmp_path, "ZZZ")
    pd.DataFrame([{"index": 0, "question": "q"}]).to_excel(
        folder / "ZZZ_MMOOC.xlsx", index=False, engine="xlsxwriter"
    )
    data = zip_folder(tmp_path)
    with pytest.raises(ValidationError, match=r"ZZZ_MMOOC\.xlsx: a VLMEvalKit prediction file has"):
        run_upload(dataset, data, "outputs.zip", format="vlmevalkit")
    assert not dataset.import_jobs.exists()
    # A job that reaches a worker all the same (kept before the check) fails just as clearly.
    from annotation.imports.jobs import import_upload_store

    source, name = import_upload_store(SimpleUploadedFile("outputs.zip", data))
    job = upload_services.response_stored_create(
        dataset=dataset, source=source, source_name=name, format="vlmevalkit"
    )
    done = upload_services.judging_import_job_run(job_id=job.pk)
    assert done is not None and done.status == ImportJobStatus.FAILED
    assert "ZZZ_MMOOC.xlsx: a VLMEvalKit prediction file has a prediction column" in done.message
    assert not ModelResponse.objects.filter(dataset=dataset).exists()


def test_a_file_of_another_harness_is_refused_with_its_name(tmp_path: Path) -> None:
    """An lmms-eval log uploaded as VLMEvalKit's output is refused, naming what it is."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 2)
    write_lmms_eval_log(
        tmp_path, model="m", model_args="pretrained=a/b", tasks=[mmooc_task(samples)]
    )
    with pytest.raises(ValidationError, match="lmms-eval output, not VLMEvalKit"):
        upload_services.response_upload_create(
            dataset=dataset,
            format="vlmevalkit",
            upload=SimpleUploadedFile("log.zip", zip_folder(tmp_path)),
        )


def test_the_command_imports_a_harness_folder(tmp_path: Path) -> None:
    """import_responses reads the folder lmms-eval wrote, with --doc-order."""
    dataset = mmooc_dataset(name="cmd")
    samples = bulk_samples(dataset, 2)
    write_lmms_eval_log(
        tmp_path, model="m", model_args="pretrained=a/b", tasks=[mmooc_task(samples)]
    )
    out = io.StringIO()
    call_command(
        "import_responses",
        str(tmp_path),
        dataset="cmd",
        format="auto",
        doc_order="position",
        stdout=out,
    )
    assert "imported 2, unchanged 0" in out.getvalue()
    with pytest.raises(CommandError, match="doc order"):
        call_command("import_responses", str(tmp_path), dataset="cmd", format="lmms_eval")


def test_an_evaluated_row_of_an_unknown_index_is_rejected(tmp_path: Path) -> None:
    """Verdict-only rows (an evaluated file beside its predictions) name a missing sample."""
    dataset = mmooc_dataset()
    samples = numbered_samples(dataset, 2)
    prediction = vlmevalkit_outputs(tmp_path, samples)
    import pandas as pd

    data = pd.read_excel(prediction)
    data.loc[len(data)] = {"index": 99, "question": "x", "prediction": "A"}
    data["res"], data["log"], data["hit"] = "A", "Succeed", 1
    data.to_excel(
        prediction.with_name(prediction.stem + "_judge.xlsx"), index=False, engine="xlsxwriter"
    )
    done = run_upload(dataset, zip_folder(tmp_path), "outputs.zip", format="vlmevalkit")
    assert done.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS, done.message
    errors = list(ImportRowError.objects.filter(job=done).values_list("message", flat=True))
    assert any("no sample “99”" in e for e in errors)


# --- pages and API -------------------------------------------------------------------


def test_the_upload_page_asks_the_lead_to_confirm_the_doc_order(
    tmp_path: Path, lead: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """An lmms-eval log uploaded on the judging page shows the match preview (target beside
    reference, under both orders); confirming imports it, discarding keeps nothing."""
    from django.test import Client
    from django.urls import reverse

    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 3)
    write_lmms_eval_log(
        tmp_path, model="qwen2_5_vl", model_args=MODEL_ARGS, tasks=[mmooc_task(samples)]
    )
    client = Client()
    client.force_login(lead)
    data = zip_folder(tmp_path)
    page = client.post(
        reverse("judging:dataset_upload", args=[dataset.pk]),
        {"kind": "responses", "format": "auto", "file": SimpleUploadedFile("log.zip", data)},
    )
    assert page.status_code == 200
    body = page.content.decode()
    assert 'id="confirm-form"' in body and "Read as lmms-eval." in body
    assert samples[2].reference_answer in body and "bulk-2" in body
    token = page.context["form"].initial["token"]
    assert not dataset.import_jobs.exists()
    confirm = reverse("judging:dataset_upload_confirm", args=[dataset.pk])
    missing = client.post(confirm, {"token": token})
    assert missing.status_code == 400
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(confirm, {"token": token, "doc_order": "position"})
    job = dataset.import_jobs.get()
    assert done.status_code == 302 and done["Location"] == f"/imports/{job.pk}/"
    job.refresh_from_db()
    assert (job.format, job.status, job.imported) == ("lmms_eval", "succeeded", 3)
    page = client.post(
        reverse("judging:dataset_upload", args=[dataset.pk]),
        {"kind": "responses", "format": "auto", "file": SimpleUploadedFile("log.zip", data)},
    )
    token = page.context["form"].initial["token"]
    from django.core import signing
    from django.core.files.storage import default_storage

    kept = signing.loads(token, salt="judging.upload.confirm")
    assert default_storage.exists(kept["source"])
    gone = client.post(confirm, {"token": token, "discard": "1"})
    assert gone.status_code == 302 and not default_storage.exists(kept["source"])
    assert dataset.import_jobs.count() == 1


def test_a_folder_upload_keeps_its_paths_and_a_vlmevalkit_file_goes_straight_in(
    tmp_path: Path, lead: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The folder input's files arrive under their paths (upload-form.js); a VLMEvalKit
    output needs no confirmation; a file of no known shape is refused with the reason."""
    from django.test import Client
    from django.urls import reverse

    dataset = mmooc_dataset()
    samples = numbered_samples(dataset, 2)
    prediction = vlmevalkit_outputs(tmp_path, samples)
    client = Client()
    client.force_login(lead)
    rel = prediction.relative_to(tmp_path).as_posix()
    with django_capture_on_commit_callbacks(execute=True):
        reply = client.post(
            reverse("judging:dataset_upload", args=[dataset.pk]),
            {
                "kind": "responses",
                "format": "auto",
                "folder": [SimpleUploadedFile(prediction.name, prediction.read_bytes())],
                "folder_paths": json.dumps([rel]),
            },
        )
    job = dataset.import_jobs.get()
    assert reply.status_code == 302, reply.content.decode()[:500]
    job.refresh_from_db()
    assert (job.format, job.status, job.imported) == ("vlmevalkit", "succeeded", 2)
    assert set(ModelResponse.objects.values_list("model_name", flat=True)) == {"GPT4o"}
    bad = client.post(
        reverse("judging:dataset_upload", args=[dataset.pk]),
        {"kind": "responses", "format": "auto", "file": SimpleUploadedFile("x.csv", b"a,b\n1,2\n")},
    )
    assert bad.status_code == 400 and "none of the response formats" in bad.content.decode()


def test_the_api_needs_the_doc_order_and_inspects_an_upload(tmp_path: Path, lead: Any) -> None:
    """POST responses/import without doc_order for an lmms-eval log is a 400 that says so;
    responses/inspect tells the format, the judges and the match preview."""
    from rest_framework.test import APIClient

    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 2)
    write_lmms_eval_log(
        tmp_path, model="m", model_args="pretrained=a/b", tasks=[mmooc_task(samples)]
    )
    data = zip_folder(tmp_path)
    api = APIClient()
    api.force_authenticate(lead)
    url = f"/api/datasets/{dataset.pk}/responses/"
    refused = api.post(
        url + "import/", {"file": SimpleUploadedFile("l.zip", data)}, format="multipart"
    )
    assert refused.status_code == 400 and "doc order" in json.dumps(refused.json())
    seen = api.post(
        url + "inspect/", {"file": SimpleUploadedFile("l.zip", data)}, format="multipart"
    )
    assert seen.status_code == 200
    body = seen.json()
    assert (body["format"], body["doc_order_needed"]) == ("lmms_eval", True)
    assert body["files"][0]["judges"] == [
        "lmms-eval mmooc_ooc mmooc_score",
        "lmms-eval mmooc_ooc exact_match",
    ]
    assert body["previews"][0]["agreement"]["position"] == [2, 2, 2]
    queued = api.post(
        url + "import/",
        {"file": SimpleUploadedFile("l.zip", data), "doc_order": "position"},
        format="multipart",
    )
    assert queued.status_code == 202 and queued.json()["format"] == "lmms_eval"


@pytest.mark.parametrize("suffix", [".tsv", ".csv"])
def test_vlmevalkit_tsv_and_csv_predictions_import_by_the_command(
    tmp_path: Path, suffix: str
) -> None:
    """PRED_FORMAT's tsv (and a csv) as smp.file.dump writes them (every cell quoted), read
    from the outputs folder by import_responses; the model comes from the folders."""
    dataset = mmooc_dataset(name=f"cmd{suffix}")
    samples = numbered_samples(dataset, 3)
    folder = vlmevalkit_run_folder(tmp_path / "outputs", "Qwen2-VL-7B")
    write_vlmevalkit_predictions(
        folder,
        model="Qwen2-VL-7B",
        dataset="MMOOC",
        rows=[
            {"index": int(s.external_id), "question": s.question, "answer": "A"} for s in samples
        ],
        predictions={int(s.external_id): f'say "A"\n{s.external_id}' for s in samples},
        suffix=suffix,
    )
    out = io.StringIO()
    call_command(
        "import_responses",
        str(tmp_path / "outputs"),
        dataset=dataset.name,
        format="vlmevalkit",
        stdout=out,
    )
    assert "imported 3, unchanged 0" in out.getvalue()
    texts = dict(
        ModelResponse.objects.filter(dataset=dataset).values_list("sample__external_id", "response")
    )
    assert texts == {s.external_id: f'say "A"\n{s.external_id}' for s in samples}
    assert set(
        ModelResponse.objects.filter(dataset=dataset).values_list("model_name", flat=True)
    ) == {"Qwen2-VL-7B"}
