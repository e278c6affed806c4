"""Imports that outlive their workers (annotation.imports.services): resume after a worker
died, cancel, retry, the sweep, and a broker that is down when a lead starts one."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError

from annotation import tasks
from annotation.imports import services as import_services
from annotation.imports.pipeline import CHUNK_ROWS, ImportRun
from annotation.models import ImportJob, ImportJobStatus, ImportRowError, JobStatus, Sample
from core.jobs import broker_down_message
from tests.annotation.imports_support import (
    b64,
    dataset_for,
    image,
    mmooc_record,
    run_import,
    write_lines,
)
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


class WorkerDied(BaseException):
    """Stands for a SIGKILL: nothing of the job's own error handling runs."""


def rows_file(tmp_path: Path, name: str = "rows.jsonl") -> Path:
    """Two full chunks and a bit, with rejected rows (a bad answer and a repeated id) in the
    first chunk, so a resumed import must neither store nor count them twice."""
    picture = b64(image(1))
    records: list[Any] = [mmooc_record(n, image=picture) for n in range(2 * CHUNK_ROWS + 10)]
    records[3] = mmooc_record(3, image=picture, question_type="bogus")
    records[7] = mmooc_record(6, image=picture)
    return write_lines(tmp_path / name, records)


def create(dataset: Any, path: Path, **kwargs: Any) -> ImportJob:
    return import_services.import_job_create(
        dataset=dataset,
        format="mmooc",
        source_kind="server_path",
        source=str(path),
        trusted=True,
        queue=False,
        **kwargs,
    )


def test_an_import_whose_worker_died_resumes_without_storing_or_counting_rows_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """The worker dies in the second chunk; the next attempt skips the committed chunk and
    ends with exactly the counts, samples and row errors of an uninterrupted import."""
    path = rows_file(tmp_path)
    clean = run_import(dataset_for("mmooc", "mmooc", name="clean"), "mmooc", path)
    dataset = dataset_for("mmooc", "mmooc", name="crashed")
    job = create(dataset, path)
    original = ImportRun.process
    calls = {"n": 0}

    def dies_in_the_second_chunk(self: ImportRun, items: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise WorkerDied
        original(self, items)

    monkeypatch.setattr(ImportRun, "process", dies_in_the_second_chunk)
    with pytest.raises(WorkerDied):
        import_services.import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.rows_done, job.attempts) == (JobStatus.RUNNING, CHUNK_ROWS, 1)
    monkeypatch.setattr(ImportRun, "process", original)

    alive = import_services.import_job_run(job_id=job.pk)
    assert alive is not None and alive.status == JobStatus.RUNNING
    stale = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    ImportJob.objects.filter(pk=job.pk).update(heartbeat_at=stale)
    done = import_services.import_job_run(job_id=job.pk)
    assert done is not None
    assert done.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS, done.message
    counts = ("rows_done", "imported", "unchanged", "updated", "rejected")
    assert [getattr(done, c) for c in counts] == [getattr(clean, c) for c in counts]
    assert done.attempts == 2 and done.rejected == 2
    assert Sample.objects.filter(dataset=dataset).count() == clean.imported
    assert sorted(ImportRowError.objects.filter(job=done).values_list("row", "message")) == sorted(
        ImportRowError.objects.filter(job=clean).values_list("row", "message")
    )


def test_a_cancel_ends_a_queued_import_and_stops_a_running_one_at_its_next_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lead: Any
) -> None:
    path = rows_file(tmp_path)
    dataset = dataset_for("mmooc", "mmooc")
    queued = create(dataset, path)
    import_services.import_job_cancel(job=queued, by=lead)
    assert queued.status == JobStatus.CANCELLED and lead.username in queued.message
    ended = import_services.import_job_run(job_id=queued.pk)
    assert ended is not None and ended.status == JobStatus.CANCELLED

    running = create(dataset, path)
    original = ImportRun.process

    def cancelled_meanwhile(self: ImportRun, items: Any) -> None:
        import_services.import_job_cancel(job=running)
        original(self, items)

    monkeypatch.setattr(ImportRun, "process", cancelled_meanwhile)
    import_services.import_job_run(job_id=running.pk)
    running.refresh_from_db()
    assert (running.status, running.rows_done) == (JobStatus.CANCELLED, 0)
    assert not Sample.objects.filter(dataset=dataset).exists()
    with pytest.raises(ValidationError):
        import_services.import_job_cancel(job=running)


def test_a_failed_upload_is_kept_and_its_retry_runs_from_the_first_row(
    tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    """A failed import keeps its uploaded file, so that Retry can run it again."""
    dataset = dataset_for("mmooc", "mmooc")
    upload = SimpleUploadedFile("rows.jsonl", b"\xff\xfe not UTF-8 \xff\n")
    job = import_services.import_job_create(
        dataset=dataset, format="mmooc", source_kind="upload", upload=upload, queue=False
    )
    failed = import_services.import_job_run(job_id=job.pk)
    assert failed is not None and failed.status == JobStatus.FAILED
    assert default_storage.exists(failed.source)
    with django_capture_on_commit_callbacks() as callbacks:
        again = import_services.import_job_retry(job=failed)
    assert (again.status, again.attempts, again.rows_done, again.finished_at) == (
        JobStatus.QUEUED,
        0,
        0,
        None,
    )
    assert len(callbacks) == 1
    with pytest.raises(ValidationError):
        import_services.import_job_retry(job=again)


def test_the_sweep_queues_an_import_whose_heartbeat_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    job = create(dataset_for("mmooc", "mmooc"), rows_file(tmp_path))
    stale = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    ImportJob.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, attempts=1, heartbeat_at=stale
    )
    sent: list[int] = []
    monkeypatch.setattr(tasks.run_import_job, "delay", sent.append)
    assert import_services.import_jobs_sweep().requeued == [job.pk]
    assert sent == [job.pk]
    assert ImportJob.objects.get(pk=job.pk).status == JobStatus.QUEUED


def test_an_import_started_while_the_broker_is_down_is_accepted_and_waits(
    tmp_path: Path,
    lead: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """No 500 and no orphan: 201, the job queued with a note; the sweep sends it later."""
    dataset = dataset_for("mmooc", "mmooc")

    def broker_down(*args: Any) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.run_import_job, "delay", broker_down)
    upload = SimpleUploadedFile("rows.jsonl", b"{}\n")
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(lead).post(
            reverse("api_dataset_imports", args=[dataset.pk]),
            {"format": "mmooc", "source_kind": "upload", "file": upload},
            format="multipart",
        )
    assert response.status_code == 202, response.content
    job = ImportJob.objects.get(pk=response.json()["id"])
    assert (job.status, job.message) == (JobStatus.QUEUED, broker_down_message())


def test_only_leads_cancel_and_retry_imports_through_the_api(
    tmp_path: Path, lead: Any, annotator: Any
) -> None:
    job = create(dataset_for("mmooc", "mmooc"), rows_file(tmp_path))
    cancel = reverse("api_import_job_cancel", args=[job.pk])
    retry = reverse("api_import_job_retry", args=[job.pk])
    assert client_for(annotator).post(cancel).status_code == 403
    assert client_for(lead).post(retry).status_code == 409  # not ended
    body = client_for(lead).post(cancel).json()
    assert (body["status"], body["can_cancel"], body["can_retry"]) == ("cancelled", False, True)
    assert client_for(lead).post(cancel).status_code == 409
    assert client_for(lead).post(retry).json()["status"] == "queued"


def test_the_job_page_offers_cancel_while_active_and_retry_once_ended(
    tmp_path: Path, lead: Any
) -> None:
    job = create(dataset_for("mmooc", "mmooc"), rows_file(tmp_path))
    client = Client()
    client.force_login(lead)
    page = reverse("annotation:import_job", args=[job.pk])
    assert shown(client.get(page), "active") and not shown(client.get(page), "ended")
    response = client.post(reverse("annotation:import_job_cancel", args=[job.pk]))
    assert response.status_code == 302
    assert ImportJob.objects.get(pk=job.pk).status == JobStatus.CANCELLED
    assert shown(client.get(page), "ended") and not shown(client.get(page), "active")
    response = client.post(reverse("annotation:import_job_retry", args=[job.pk]))
    assert response.status_code == 302
    assert ImportJob.objects.get(pk=job.pk).status == JobStatus.QUEUED


def shown(response: Any, when: str) -> bool:
    """Whether the page's form for that state (active: cancel, ended: retry) is visible."""
    match = re.search(rf'data-when="{when}"\s*(hidden)?\s*>', response.content.decode())
    assert match is not None
    return match.group(1) is None
