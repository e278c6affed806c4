"""The import API: only leads start and watch imports; the job endpoint shows live progress."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import services
from annotation.models import ImportJob, ImportJobStatus, JobStatus, MediaAsset, Sample
from tests.annotation.imports_support import (
    dataset_for,
    mmooc_record,
    run_import,
    write_lines,
)
from tests.conftest import client_for
from tests.support.processes import wait_until

pytestmark = pytest.mark.django_db


def jsonl_upload(tmp_path: Path, records: list[Any], name: str = "m.jsonl") -> SimpleUploadedFile:
    path = write_lines(tmp_path / name, records)
    return SimpleUploadedFile(name, path.read_bytes())


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_only_leads_may_use_the_import_api(
    request: pytest.FixtureRequest, tmp_path: Path, role: str
) -> None:
    """Annotators and auditors get 403 on starting, listing and watching imports."""
    user = request.getfixturevalue(role)
    dataset = dataset_for("mmooc", "mmooc")
    services.dataset_add_member(dataset=dataset, user=user)
    job = run_import(dataset, "mmooc", write_lines(tmp_path / "m.jsonl", [mmooc_record(1)]))
    client = client_for(user)
    create = client.post(
        reverse("api_dataset_imports", args=[dataset.pk]),
        {"format": "mmooc", "file": jsonl_upload(tmp_path, [mmooc_record(2)])},
        format="multipart",
    )
    assert create.status_code == 403
    assert client.get(reverse("api_dataset_imports", args=[dataset.pk])).status_code == 403
    assert client.get(reverse("api_import_job", args=[job.pk])).status_code == 403
    assert client.get(reverse("api_import_job_errors", args=[job.pk])).status_code == 403
    assert ImportJob.objects.count() == 1


def test_lead_uploads_a_file_and_the_job_reports_rows_and_errors(
    lead: Any, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    """A multipart upload creates a job (202 Accepted); once run, its JSON has counts and errors."""
    dataset = dataset_for("mmooc", "mmooc")
    upload = jsonl_upload(tmp_path, [mmooc_record(1), mmooc_record(2, answer="Z"), "{broken"])
    client = client_for(lead)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("api_dataset_imports", args=[dataset.pk]),
            {"format": "mmooc", "file": upload},
            format="multipart",
        )
    assert response.status_code == 202, response.json()
    assert response["Location"] == f"/api/imports/{response.json()['id']}/"
    job_id = response.json()["id"]
    detail = client.get(reverse("api_import_job", args=[job_id])).json()
    assert detail["status"] == ImportJobStatus.SUCCEEDED_WITH_ERRORS and detail["finished"] is True
    assert detail["status_label"] == "Finished with errors"
    assert (detail["total_rows"], detail["rows_done"], detail["percent"]) == (3, 3, 100)
    assert (detail["imported"], detail["rejected"]) == (1, 2)
    assert [e["row"] for e in detail["row_errors"]] == [2, 3]
    assert "not one of the options" in detail["row_errors"][0]["message"]
    assert detail["errors_csv_url"].endswith("/errors.csv")
    errors = client.get(reverse("api_import_job_errors", args=[job_id])).json()
    assert errors["count"] == 2


@pytest.mark.parametrize(
    ("payload", "field", "status"),
    [
        ({"format": "nope"}, "format", 400),
        ({"format": "trimodal", "source_kind": "s3_prefix", "location": "s3://b/p"}, "detail", 409),
        ({"format": "mmooc", "source_kind": "server_path", "location": "/etc"}, "detail", 403),
        ({"format": "mmooc", "source_kind": "s3_prefix", "location": "ftp://x"}, "detail", 400),
        ({"format": "mmooc"}, "detail", 400),
    ],
)
def test_bad_import_requests_get_a_readable_refusal(
    lead: Any, payload: dict[str, str], field: str, status: int
) -> None:
    """Unknown formats and a missing file: 400; a format of the dataset's other kind: 409;
    a server path outside the import roots: 403; each with a message, and no job."""
    dataset = dataset_for("mmooc", "mmooc")
    response = client_for(lead).post(
        reverse("api_dataset_imports", args=[dataset.pk]), payload, format="multipart"
    )
    assert response.status_code == status
    assert response.json()[field]
    assert ImportJob.objects.count() == 0


def test_empty_upload_is_refused(lead: Any) -> None:
    """An empty file is a 400 before any job exists."""
    dataset = dataset_for("mmooc", "mmooc")
    response = client_for(lead).post(
        reverse("api_dataset_imports", args=[dataset.pk]),
        {"format": "mmooc", "file": SimpleUploadedFile("empty.jsonl", b"")},
        format="multipart",
    )
    assert response.status_code == 400 and "file" in response.json()


def test_job_list_and_detail_take_a_fixed_number_of_queries(
    lead: Any, tmp_path: Path, django_assert_max_num_queries: Any
) -> None:
    """Listing a dataset's jobs and polling a job cost the same however many jobs or errors."""
    dataset = dataset_for("mmooc", "mmooc")
    bad = [mmooc_record(n, answer="Z") for n in range(30)]
    for n in range(4):
        job = run_import(dataset, "mmooc", write_lines(tmp_path / f"{n}.jsonl", bad))
    client = client_for(lead)
    with django_assert_max_num_queries(4):
        listing = client.get(reverse("api_dataset_imports", args=[dataset.pk]))
    assert listing.json()["count"] == 4
    with django_assert_max_num_queries(3):
        detail = client.get(reverse("api_import_job", args=[job.pk]))
    assert len(detail.json()["row_errors"]) == 30


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
@pytest.mark.redis
def test_a_real_worker_runs_the_import_and_derives_thumbnails(
    lead: Any, tmp_path: Path, live_worker: Any
) -> None:
    """Through the API and a real Celery worker: the job finishes and thumbnails get made."""
    dataset = dataset_for("mmooc", "mmooc")
    upload = jsonl_upload(tmp_path, [mmooc_record(n) for n in range(1, 8)])
    response = client_for(lead).post(
        reverse("api_dataset_imports", args=[dataset.pk]),
        {"format": "mmooc", "file": upload},
        format="multipart",
    )
    assert response.status_code == 202
    job = ImportJob.objects.get(pk=response.json()["id"])

    def finished() -> bool:
        job.refresh_from_db()
        return job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED)

    started = time.monotonic()
    wait_until(finished, timeout=120, what="the import job")
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert Sample.objects.filter(dataset=dataset).count() == 7
    wait_until(
        lambda: not MediaAsset.objects.filter(derived_at__isnull=True).exists(),
        timeout=120 - (time.monotonic() - started),
        what="the thumbnails",
    )
    assert all(MediaAsset.objects.values_list("thumbnail", flat=True))
