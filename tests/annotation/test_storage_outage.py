"""An import and a snapshot outlive their media storage going away: a real worker writes to a
SeaweedFS server of the test's own, which is stopped while each job is mid-way and started
again on the same ports and folder. Each job says it waits for the storage, uses up no
attempt, ends succeeded once it is back, with every row once, and no object in the bucket
that no row points to."""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from annotation.imports import services as import_services
from annotation.imports.pipeline import CHUNK_ROWS
from annotation.models import ImportJob, JobStatus, MediaAsset, Sample, Snapshot
from annotation.snapshots import services as snapshot_services
from core.outages import storage_down_message
from tests.annotation.factories import png_bytes
from tests.annotation.imports_support import b64, colour, dataset_for, mmooc_record, write_lines
from tests.conftest import worker_on
from tests.core.test_jobs_recovery import tables_locked, waiting_on
from tests.judging.factories import bulk_samples
from tests.support.processes import SeaweedServer, s3_client, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.s3]

BUCKET = "outage"
DEADLINE = 120  # seconds after the storage is back


@pytest.fixture
def storage(tmp_path: Path, settings: Any) -> Iterator[SeaweedServer]:
    """A SeaweedFS of this test's own as the default storage, here and in the workers."""
    from conftest import weed_binary

    weed = weed_binary()
    assert weed is not None
    server = SeaweedServer(weed, tmp_path / "seaweedfs")
    server.start()
    try:
        s3_client(server.endpoint).create_bucket(Bucket=BUCKET)
        settings.STORAGES = {
            **django_settings.STORAGES,
            "default": {
                "BACKEND": "storages.backends.s3.S3Storage",
                "OPTIONS": {
                    "bucket_name": BUCKET,
                    "endpoint_url": server.endpoint,
                    "region_name": "us-east-1",
                    "access_key": "test",
                    "secret_key": "test",
                    "default_acl": None,
                    "file_overwrite": True,
                    "addressing_style": "path",
                    "signature_version": "s3v4",
                },
            },
        }
        yield server
    finally:
        server.stop()


def _own_image(n: int) -> str:
    """A PNG of its own for each row (so every chunk stores new objects), base64."""
    return b64(png_bytes(width=8 + n // 256, height=6, colour=colour(n)))


def _worker_env(server: SeaweedServer) -> dict[str, str]:
    return {
        "JOB_SWEEP_SECONDS": "1",
        "S3_BUCKET": BUCKET,
        "S3_ENDPOINT_URL": server.endpoint,
        "S3_ACCESS_KEY_ID": "test",
        "S3_SECRET_ACCESS_KEY": "test",
    }


def _objects(server: SeaweedServer, prefix: str = "") -> set[str]:
    pages = s3_client(server.endpoint).get_paginator("list_objects_v2")
    return {
        item["Key"]
        for page in pages.paginate(Bucket=BUCKET, Prefix=prefix)
        for item in page.get("Contents", [])
    }


def _waits_for_storage(model: Any, pk: int) -> bool:
    row = model.objects.values("status", "message").get(pk=pk)
    return bool(row["status"] == JobStatus.QUEUED and row["message"] == storage_down_message())


def _status(model: Any, pk: int) -> str:
    return str(model.objects.values_list("status", flat=True).get(pk=pk))


def _ended(model: Any, pk: int) -> bool:
    return _status(model, pk) in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)


def test_an_import_waits_for_the_media_storage_and_ends_once_it_is_back(
    transactional_db: None, tmp_path: Path, storage: SeaweedServer
) -> None:
    """Stopped after the import's first chunk: the import waits (queued, saying why, no
    attempt used), and once the storage is back it ends with every row and image once; every
    object in the bucket belongs to an asset."""
    rows = CHUNK_ROWS * 3
    source = write_lines(
        tmp_path / "rows.jsonl", [mmooc_record(n, image=_own_image(n)) for n in range(rows)]
    )
    dataset = dataset_for("mmooc", "mmooc")
    with worker_on(os.environ["REDIS_URL"], _worker_env(storage), beat=True):
        job = import_services.import_job_create(
            dataset=dataset,
            format="mmooc",
            source_kind="server_path",
            source=str(source),
            trusted=True,
        )
        wait_until(
            lambda: ImportJob.objects.get(pk=job.pk).rows_done >= CHUNK_ROWS,
            timeout=90,
            what="the import's first chunk",
        )
        with tables_locked("annotation_sample"):
            wait_until(partial(waiting_on, "annotation_sample"), timeout=60, what="the import")
            storage.stop()
        wait_until(
            partial(_waits_for_storage, ImportJob, job.pk),
            timeout=90,
            what="the import to wait for the storage",
        )
        assert ImportJob.objects.get(pk=job.pk).attempts == 0
        storage.start()
        wait_until(partial(_ended, ImportJob, job.pk), timeout=DEADLINE, what="the import")
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert (job.rows_done, job.imported, job.rejected) == (rows, rows, 0)
    assert Sample.objects.filter(dataset=dataset).count() == rows
    assets = MediaAsset.objects.all()
    assert assets.count() == rows
    owned = {
        name for row in assets.values_list("file", "thumbnail", "display") for name in row if name
    }
    assert _objects(storage) - {job.source} <= owned
    assert {a.file.name for a in assets} <= _objects(storage)


def test_a_snapshot_waits_for_the_media_storage_and_ends_once_it_is_back(
    transactional_db: None, storage: SeaweedServer
) -> None:
    """Stopped while the snapshot writes its entries: it cannot store its release, waits
    (queued, saying why), and once the storage is back it is built again: one release and
    one manifest stored, every entry once."""
    dataset = dataset_for("mmooc", "mmooc")
    bulk_samples(dataset, 300)
    with (
        worker_on(os.environ["REDIS_URL"], _worker_env(storage), beat=True),
    ):
        with tables_locked("annotation_snapshotentry"):
            snapshot = snapshot_services.snapshot_create(
                dataset=dataset, name="v1", format="jsonl", filter={"statuses": ["pending_review"]}
            )
            wait_until(
                partial(waiting_on, "annotation_snapshotentry"), timeout=60, what="the snapshot"
            )
            storage.stop()
        wait_until(
            partial(_waits_for_storage, Snapshot, snapshot.pk),
            timeout=90,
            what="the snapshot to wait for the storage",
        )
        storage.start()
        wait_until(partial(_ended, Snapshot, snapshot.pk), timeout=DEADLINE, what="the snapshot")
    snapshot.refresh_from_db()
    assert snapshot.status == JobStatus.SUCCEEDED, snapshot.message
    assert (snapshot.done, snapshot.entries.count(), snapshot.attempts) == (300, 300, 1)
    stored = _objects(storage, "snapshots/")
    assert stored == {snapshot.file.name, snapshot.file.name.rsplit("/", 1)[0] + "/manifest.json"}
