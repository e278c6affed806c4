"""Tests for judging.imports.services: response and verdict uploads as background import jobs
(row errors and their CSV, zips of several files, resume after a worker died, retry, cancel)."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.imports import jobs as import_jobs
from annotation.models import ImportJob, ImportJobStatus, ImportKind, ImportRowError, JobStatus
from judging.imports import services
from judging.imports.services import CHUNK_ROWS, _ChunkedRun
from judging.models import Judge, ModelResponse, Verdict
from tests.annotation.factories import mmooc_dataset
from tests.judging.factories import LOGICVISTA, bulk_samples, logicvista_dataset

pytestmark = pytest.mark.django_db


class WorkerDied(BaseException):
    """Stands for a SIGKILL: nothing of the job's own error handling runs."""


def lines(rows: list[Any]) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data)


def run(job: ImportJob) -> ImportJob:
    done = services.judging_import_job_run(job_id=job.pk)
    assert done is not None
    return done


def test_bad_rows_are_recorded_with_their_line_and_the_good_rows_go_in(lead: Any) -> None:
    """Rejected rows (unknown sample, a repeat, no response, broken JSON) are kept with their
    line and reason, shown on the job and in its CSV; the job ends succeeded with errors."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 3)
    data = lines(
        [
            {"id": "bulk-0", "response": "A"},
            {"id": "ghost", "response": "B"},
            {"id": "bulk-0", "response": "again"},
            {"id": "bulk-1"},
            "{not json",
            {"id": "bulk-2", "response": "C"},
        ]
    )
    job = services.response_upload_create(
        dataset=dataset, format="jsonl", upload=upload("r.jsonl", data), model="m"
    )
    assert (job.kind, job.status, job.options) == (
        ImportKind.RESPONSES,
        JobStatus.QUEUED,
        {"model": "m"},
    )
    done = run(job)
    assert done.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS, done.message
    assert (done.total_rows, done.rows_done, done.imported, done.rejected) == (6, 6, 2, 4)
    errors = list(ImportRowError.objects.filter(job=done).values_list("row", "message"))
    assert [row for row, _m in errors] == [2, 3, 4, 5]
    assert "ghost" in errors[0][1] and "second response" in errors[1][1]
    assert set(ModelResponse.objects.values_list("sample__external_id", "model_name")) == {
        ("bulk-0", "m"),
        ("bulk-2", "m"),
    }
    assert not default_storage.exists(done.source)  # removed once imported

    client = Client()
    client.force_login(lead)
    page = client.get(reverse("annotation:import_job", args=[done.pk]))
    assert page.status_code == 200
    assert reverse("judging:dataset_judging", args=[dataset.pk]) in page.content.decode()
    csv = client.get(reverse("annotation:import_job_errors_csv", args=[done.pk]))
    text = b"".join(csv.streaming_content).decode()  # type: ignore[attr-defined]
    assert text.splitlines()[0] == "row,external_id,message"
    assert len(text.splitlines()) == 5 and "ghost" in text


def test_a_file_with_every_row_rejected_fails_and_an_unreadable_one_fails_with_the_reason() -> None:
    dataset = mmooc_dataset()
    bulk_samples(dataset, 1)
    nothing = services.response_upload_create(
        dataset=dataset, format="jsonl", upload=upload("r.jsonl", lines([{"id": "x"}])), model="m"
    )
    assert run(nothing).status == JobStatus.FAILED
    assert "Every row was rejected" in run(nothing).message
    broken = services.response_upload_create(
        dataset=dataset, format="logicvista", upload=upload("m-answers.json", b"[1, 2]")
    )
    failed = run(broken)
    assert failed.status == JobStatus.FAILED and "JSON object" in failed.message
    assert default_storage.exists(failed.source)  # kept for a retry


def test_a_zip_of_real_logicvista_answer_files_imports_each_model() -> None:
    """Each answer file of the zip is imported under the model its name gives; the item
    that is not a sample is rejected once per file, named with its file."""
    dataset = logicvista_dataset()
    answers = json.loads((LOGICVISTA / "answers" / "GPT4-answers.json").read_text())
    buffer = io.BytesIO()
    names = ["GPT4-answers.json", "BLIP2-answers.json"]
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.write(LOGICVISTA / "answers" / name, f"answers/{name}")
        archive.writestr("README.txt", "not an answer file")
    job = services.response_upload_create(
        dataset=dataset, format="logicvista", upload=upload("answers.zip", buffer.getvalue())
    )
    done = run(job)
    assert done.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS, done.message
    assert done.total_rows == 2 * len(answers)
    assert done.imported == 2 * (len(answers) - 1) and done.rejected == 2
    assert set(ModelResponse.objects.values_list("model_name", flat=True)) == {"GPT4", "BLIP2"}
    messages = sorted(ImportRowError.objects.filter(job=done).values_list("message", flat=True))
    assert messages[0].startswith("BLIP2-answers.json: ")
    assert messages[1].startswith("GPT4-answers.json: ")


def test_a_job_whose_worker_died_resumes_and_a_retry_stores_no_row_twice(
    monkeypatch: pytest.MonkeyPatch, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The worker dies in the second chunk; the next attempt goes on from the committed
    chunk, with the counts and rows of an uninterrupted import; a retry of the whole file
    after that finds every row unchanged."""
    dataset = mmooc_dataset()
    n = 2 * CHUNK_ROWS + 10
    bulk_samples(dataset, n)
    rows: list[Any] = [{"id": f"bulk-{i}", "response": f"answer {i}"} for i in range(n)]
    rows[CHUNK_ROWS + 5] = {"id": "bulk-3", "response": "a repeat of a first-chunk row"}
    job = services.response_upload_create(
        dataset=dataset, format="jsonl", upload=upload("r.jsonl", lines(rows)), model="m"
    )
    original = _ChunkedRun._store
    calls = {"n": 0}

    def dies_in_the_second_chunk(self: _ChunkedRun, chunk: Any, store: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise WorkerDied
        original(self, chunk, store)

    monkeypatch.setattr(_ChunkedRun, "_store", dies_in_the_second_chunk)
    with pytest.raises(WorkerDied):
        run(job)
    job.refresh_from_db()
    assert (job.status, job.rows_done, job.attempts) == (JobStatus.RUNNING, CHUNK_ROWS, 1)
    monkeypatch.setattr(_ChunkedRun, "_store", original)
    assert run(job).status == JobStatus.RUNNING  # its heartbeat is fresh: left alone
    stale = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    ImportJob.objects.filter(pk=job.pk).update(heartbeat_at=stale)
    done = run(job)
    assert done.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS, done.message
    assert (done.attempts, done.rows_done, done.imported, done.rejected) == (2, n, n - 1, 1)
    assert ModelResponse.objects.filter(dataset=dataset).count() == n - 1
    (error,) = ImportRowError.objects.filter(job=done)
    assert error.row == CHUNK_ROWS + 6 and "second response" in error.message

    ImportJob.objects.filter(pk=job.pk).update(status=JobStatus.FAILED)
    default_storage.save(done.source, io.BytesIO(lines(rows)))
    with django_capture_on_commit_callbacks(execute=True):
        import_jobs.import_job_retry(job=done)
    done.refresh_from_db()
    assert (done.imported, done.unchanged, done.rejected) == (0, n - 1, 1), done.message
    assert ModelResponse.objects.filter(dataset=dataset).count() == n - 1


def test_a_cancel_stops_a_running_import_at_its_next_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dataset = mmooc_dataset()
    bulk_samples(dataset, 10)
    rows = [{"id": f"bulk-{i}", "response": "A"} for i in range(10)]
    job = services.response_upload_create(
        dataset=dataset, format="jsonl", upload=upload("r.jsonl", lines(rows)), model="m"
    )
    original = _ChunkedRun._store

    def cancelled_meanwhile(self: _ChunkedRun, chunk: Any, store: Any) -> None:
        import_jobs.import_job_cancel(job=job)
        original(self, chunk, store)

    monkeypatch.setattr(_ChunkedRun, "_store", cancelled_meanwhile)
    done = run(job)
    assert (done.status, done.rows_done) == (JobStatus.CANCELLED, 0)
    assert not ModelResponse.objects.exists()


def test_verdicts_upload_as_a_job_with_their_row_errors() -> None:
    dataset = mmooc_dataset()
    bulk_samples(dataset, 2)
    data = lines(
        [
            {"sample_id": "bulk-0", "judge": "o3", "label": "unanswerable", "category": "MP"},
            {"sample_id": "bulk-1", "judge": "o3", "label": "?"},
            {"sample_id": "ghost", "judge": "o3", "label": "answerable"},
        ]
    )
    job = services.verdict_upload_create(dataset=dataset, upload=upload("v.jsonl", data))
    done = run(job)
    assert done.kind == ImportKind.VERDICTS
    assert done.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS, done.message
    assert (done.imported, done.rejected) == (1, 2)
    assert "created external judge o3" in done.message
    assert Verdict.objects.count() == 1 and Judge.objects.filter(name="o3").exists()
    rows = list(ImportRowError.objects.filter(job=done).values_list("row", flat=True))
    assert rows == [2, 3]
    again = services.verdict_upload_create(dataset=dataset, upload=upload("v.jsonl", data))
    assert (run(again).imported, run(again).unchanged) == (0, 1)


def test_uploads_are_refused_with_a_reason_before_any_job_is_made() -> None:
    dataset = mmooc_dataset()
    with pytest.raises(ValidationError, match="Unknown response format"):
        services.response_upload_create(dataset=dataset, format="csv", upload=upload("a", b"x"))
    with pytest.raises(ValidationError, match="Choose a file"):
        services.verdict_upload_create(dataset=dataset, upload=None)
    dataset.archived = True
    dataset.save()
    with pytest.raises(ValidationError, match="archived"):
        services.verdict_upload_create(dataset=dataset, upload=upload("v.jsonl", b"{}"))
    assert not ImportJob.objects.exists()
