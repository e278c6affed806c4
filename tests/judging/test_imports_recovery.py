"""Response uploads in real Celery worker processes: the API answers 202 and a worker imports
the file; a worker SIGKILLed in the middle of an import leaves a job that a new worker's sweep
resumes from its last committed chunk, storing every row exactly once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from annotation.models import ImportJob, ImportJobStatus, ImportRowError, JobStatus
from judging.imports import services
from judging.imports.services import CHUNK_ROWS
from judging.models import ModelResponse
from tests.annotation.factories import mmooc_dataset
from tests.conftest import client_for, worker_on
from tests.core.test_jobs_recovery import DEADLINE, SWEEP_EVERY_SECOND, tables_locked, waiting_on
from tests.judging.factories import bulk_samples, jsonl
from tests.judging.test_imports_services import lines, upload
from tests.support.processes import kill_worker, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def ended(job_id: int) -> bool:
    status = ImportJob.objects.values_list("status", flat=True).get(pk=job_id)
    return status not in (JobStatus.QUEUED, JobStatus.RUNNING)


def test_the_api_answers_202_and_a_real_worker_imports_the_file(
    transactional_db: None, lead: Any, tmp_path: Path
) -> None:
    dataset = mmooc_dataset()
    bulk_samples(dataset, 50)
    rows = [{"id": f"bulk-{i}", "response": f"answer {i}"} for i in range(50)]
    path = jsonl(tmp_path / "r.jsonl", [*rows, {"id": "ghost", "response": "x"}])
    with worker_on(os.environ["REDIS_URL"]):
        with path.open("rb") as handle:
            reply = client_for(lead).post(
                reverse("api_response_import", args=[dataset.pk]),
                {"file": handle, "format": "jsonl", "model": "m"},
                format="multipart",
            )
        assert reply.status_code == 202, reply.content
        job_id = reply.json()["id"]
        wait_until(lambda: ended(job_id), timeout=60, what="the import to end in the worker")
    job = ImportJob.objects.get(pk=job_id)
    assert job.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS, job.message
    assert (job.rows_done, job.imported, job.rejected, job.attempts) == (51, 50, 1, 1)
    assert ModelResponse.objects.filter(dataset=dataset, model_name="m").count() == 50


def test_an_upload_whose_worker_is_killed_is_resumed_by_the_sweep(
    transactional_db: None,
) -> None:
    """The first chunk commits; the second, which has a rejected row, waits on a lock on the
    row-error table when the worker is SIGKILLed; the sweep of a new worker resumes the job
    from the second chunk and it ends with every row stored or rejected exactly once."""
    dataset = mmooc_dataset()
    n = 3 * CHUNK_ROWS
    bulk_samples(dataset, n)
    rows: list[Any] = [{"id": f"bulk-{i}", "response": f"answer {i}"} for i in range(n)]
    rows[CHUNK_ROWS + 1] = {"id": "ghost", "response": "no such sample"}
    broker = os.environ["REDIS_URL"]
    with (
        tables_locked("annotation_importrowerror"),
        worker_on(broker, SWEEP_EVERY_SECOND, beat=True) as worker,
    ):
        job = services.response_upload_create(
            dataset=dataset, format="jsonl", upload=upload("r.jsonl", lines(rows)), model="m"
        )
        wait_until(
            lambda: waiting_on("annotation_importrowerror"),
            timeout=60,
            what="the second chunk to wait on the lock",
        )
        stuck = ImportJob.objects.get(pk=job.pk)
        assert (stuck.status, stuck.rows_done, stuck.attempts) == (JobStatus.RUNNING, CHUNK_ROWS, 1)
        kill_worker(worker)

    with worker_on(broker, SWEEP_EVERY_SECOND, beat=True):
        wait_until(lambda: ended(job.pk), timeout=DEADLINE, what="the import to end after the kill")
    job.refresh_from_db()
    assert job.status == ImportJobStatus.SUCCEEDED_WITH_ERRORS, job.message
    assert (job.attempts, job.rows_done, job.imported, job.rejected) == (2, n, n - 1, 1)
    assert ModelResponse.objects.filter(dataset=dataset).count() == n - 1
    assert ImportRowError.objects.filter(job=job).count() == 1
