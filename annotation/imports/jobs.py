"""The life of an import job of any kind: an uploaded file stored for a worker, the job queued
for its kind's task, its end (failed when every row was rejected), cancel, retry and the sweep
that resumes jobs whose worker died (``core.jobs``).

Samples are imported by ``annotation.imports.services``; the judging app runs its own kinds
(model responses, verdicts) on the same job rows through these functions.
"""

from __future__ import annotations

import posixpath
import tempfile
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone, translation
from django.utils.text import get_valid_filename
from django.utils.translation import gettext as _

from annotation.imports.kinds import import_kind_spec, import_kinds
from annotation.imports.pipeline import Counts
from annotation.models import (
    Dataset,
    ImportJob,
    ImportJobStatus,
    ImportRowError,
    ImportSourceKind,
    WebhookEvent,
)
from annotation.webhooks.services import webhook_event_emit
from core.jobs import (
    ACTIVE,
    RETRYABLE,
    Claim,
    JobStatus,
    SweepResult,
    job_enqueue,
    job_finish,
    job_retry_fields,
    job_sweep,
)
from core.tasks import enqueue

if TYPE_CHECKING:
    from django.contrib.auth.models import User

T = TypeVar("T")


def import_job_enqueue(job_id: int, kind: str) -> None:
    """Send the task of a committed job (it stays queued, with a note, while the broker is
    down; the sweep sends it later)."""
    task = import_kind_spec(kind).task
    job_enqueue(ImportJob, job_id, lambda: enqueue(task, job_id))


def import_dataset_check_open(dataset: Dataset) -> None:
    if dataset.archived:
        raise ValidationError(
            _("“%(name)s” is archived: nothing can be imported into it.") % {"name": dataset.name},
            code="archived",
        )


def import_upload_store(upload: File[Any] | None) -> tuple[str, str]:
    """Keep an uploaded file where a worker can read it: (storage name, file name)."""
    if upload is None or not upload.name:
        raise ValidationError(_("Choose a file to upload."), code="no_file")
    if upload.size is not None and upload.size > settings.IMPORT_MAX_UPLOAD_BYTES:
        raise ValidationError(
            _("The file is %(size)s bytes, more than the limit of %(limit)s bytes.")
            % {"size": upload.size, "limit": settings.IMPORT_MAX_UPLOAD_BYTES},
            code="too_big",
        )
    source_name = Path(upload.name).name
    stored = f"imports/{uuid.uuid4().hex}/{get_valid_filename(source_name) or 'upload'}"
    return default_storage.save(stored, upload), source_name


def import_upload_bundle(files: list[tuple[str, File[Any]]]) -> File[Any]:
    """Several uploaded files as one zip (the form sent a folder or a handful of files),
    each under its path inside the folder: a path that climbs out of it, or is absolute, is
    refused. The zip is a temporary file, removed when closed."""
    if len(files) == 1 and "/" not in files[0][0].replace("\\", "/").strip("/"):
        return files[0][1]  # one file, not inside a folder: kept as it is
    # Closed (and removed) with the File returned, once stored.
    bundle = tempfile.TemporaryFile(suffix=".zip")  # noqa: SIM115
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        seen: set[str] = set()
        for path, upload in files:
            name = posixpath.normpath(path.replace("\\", "/")).lstrip("/")
            if not name or name == "." or name.startswith("../") or name in seen:
                raise ValidationError(
                    _("The upload holds a file with a bad or repeated path: %(path)s")
                    % {"path": path},
                    code="bad_path",
                )
            seen.add(name)
            with archive.open(name, "w") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
    bundle.seek(0)
    return File(bundle, name="upload.zip")


@transaction.atomic
def import_upload_job_create(
    *,
    dataset: Dataset,
    kind: str,
    format: str,
    upload: File[Any] | None,
    options: dict[str, str] | None = None,
    created_by: User | None = None,
) -> ImportJob:
    """Record the import of an uploaded file (or zip) of ``kind`` and queue it on commit.

    The caller checks the format and options its kind understands; the request only stores
    the file, however large: every row is read by a worker.
    """
    import_dataset_check_open(dataset)
    source, source_name = import_upload_store(upload)
    return import_stored_job_create(
        dataset=dataset,
        kind=kind,
        format=format,
        source=source,
        source_name=source_name,
        options=options,
        created_by=created_by,
    )


def import_refused_job_create(
    *,
    dataset: Dataset,
    kind: str,
    format: str,
    source_name: str,
    message: str,
    created_by: User | None = None,
) -> ImportJob:
    """Record an import refused before any row was read (its file is of no format the kind
    reads) as a failed job with the reason: an API client follows every start the same way,
    and the upload is not kept."""
    import_dataset_check_open(dataset)
    now = timezone.now()
    return ImportJob.objects.create(
        dataset=dataset,
        kind=kind,
        created_by=created_by,
        source_kind=ImportSourceKind.UPLOAD,
        source="",
        source_name=source_name[:300],
        format=format,
        status=ImportJobStatus.FAILED,
        message=message,
        started_at=now,
        finished_at=now,
    )


@transaction.atomic
def import_stored_job_create(
    *,
    dataset: Dataset,
    kind: str,
    format: str,
    source: str,
    source_name: str,
    options: dict[str, str] | None = None,
    created_by: User | None = None,
) -> ImportJob:
    """Record the import of an upload already kept in the storage (``import_upload_store``;
    a lead confirmed how to read it) and queue it on commit."""
    import_dataset_check_open(dataset)
    if not default_storage.exists(source):
        raise ValidationError(
            _("The uploaded file is no longer kept; upload it again."), code="no_file"
        )
    job = ImportJob.objects.create(
        dataset=dataset,
        kind=kind,
        created_by=created_by,
        source_kind=ImportSourceKind.UPLOAD,
        source=source,
        source_name=source_name[:300],
        format=format,
        options={k: str(v) for k, v in (options or {}).items() if v},
    )
    transaction.on_commit(lambda: import_job_enqueue(job.pk, kind))
    return job


def import_job_finish(claim: Claim, *, counts: Counts | None, status: str, message: str) -> None:
    """End a claimed job with its counts (unless it was cancelled or taken over meanwhile),
    and tell the webhooks that want it."""
    fields = counts.fields() if counts is not None else {}
    if job_finish(claim, status=status, message=message, **fields):
        job = (
            ImportJob.objects.filter(pk=claim.pk)
            .values(
                "dataset_id",
                "kind",
                "format",
                "source_name",
                "status",
                "total_rows",
                "imported",
                "unchanged",
                "updated",
                "rejected",
                "message",
            )
            .first()
        )
        if job is not None:
            data: dict[str, Any] = dict(job)
            dataset_id = data.pop("dataset_id")
            webhook_event_emit(
                event=WebhookEvent.IMPORT_FINISHED,
                dataset=dataset_id,
                data={"import": {"id": claim.pk, **data}},
            )


def import_job_conclude(claim: Claim, *, counts: Counts, summary: str) -> bool:
    """End a job that read its whole source: failed when every row was rejected, succeeded
    with errors when some were, succeeded otherwise. True unless it failed."""
    kept = counts.imported + counts.unchanged + counts.updated
    if counts.rejected and not kept:
        message = summary + " " + _("Every row was rejected: nothing was imported.")
        import_job_finish(claim, counts=counts, status=ImportJobStatus.FAILED, message=message)
        return False
    status = ImportJobStatus.SUCCEEDED_WITH_ERRORS if counts.rejected else ImportJobStatus.SUCCEEDED
    import_job_finish(claim, counts=counts, status=status, message=summary)
    return True


def import_job_counts(job: ImportJob) -> Counts:
    """The counts a job's earlier attempts committed (a resumed job goes on from them)."""
    return Counts(
        rows_done=job.rows_done,
        imported=job.imported,
        unchanged=job.unchanged,
        updated=job.updated,
        rejected=job.rejected,
    )


def import_job_cancel(*, job: ImportJob, by: User | None = None) -> ImportJob:
    """End a queued or running import at once; the rows it already stored stay.

    A worker still running it stops at its next chunk without storing that chunk.
    """
    name = by.get_username() if by is not None else ""
    message = (
        _("Cancelled by %(user)s after %(rows)s rows; the rows imported so far stay.")
        if name
        else _("Cancelled after %(rows)s rows; the rows imported so far stay.")
    )
    with transaction.atomic():
        locked = ImportJob.objects.select_for_update().get(pk=job.pk)
        if locked.status not in ACTIVE:
            raise ValidationError(_("The import has already ended."), code="ended")
        locked.status = JobStatus.CANCELLED
        locked.finished_at = timezone.now()
        locked.message = message % {"user": name, "rows": locked.rows_done}
        locked.save(update_fields=["status", "finished_at", "message"])
    job.refresh_from_db()
    return job


def import_job_retry(*, job: ImportJob) -> ImportJob:
    """Run a failed or cancelled import again from its first row (stored rows stay unchanged)."""
    with transaction.atomic():
        locked = ImportJob.objects.select_for_update().get(pk=job.pk)
        if locked.status not in RETRYABLE:
            raise ValidationError(
                _("Only a failed or cancelled import can be retried."), code="not_ended"
            )
        if locked.source_kind == ImportSourceKind.UPLOAD and not default_storage.exists(
            locked.source
        ):
            raise ValidationError(
                _("The uploaded file is no longer stored; upload it again."), code="no_upload"
            )
        ImportRowError.objects.filter(job=locked).delete()
        ImportJob.objects.filter(pk=locked.pk).update(
            **job_retry_fields(),
            total_rows=None,
            rows_done=0,
            imported=0,
            unchanged=0,
            updated=0,
            rejected=0,
            started_at=None,
            finished_at=None,
        )
        transaction.on_commit(lambda: import_job_enqueue(locked.pk, locked.kind))
    job.refresh_from_db()
    return job


def import_jobs_sweep() -> SweepResult:
    """Resume imports of every kind whose worker died, and send again those whose message was
    lost, each to its kind's task."""
    result = SweepResult()
    for kind, spec in import_kinds().items():
        swept = job_sweep(
            ImportJob,
            queryset=ImportJob.objects.filter(kind=kind),
            send=lambda job_id, task=spec.task: enqueue(task, job_id),  # type: ignore[misc]
        )
        result.requeued += swept.requeued
        result.failed += swept.failed
        result.resent += swept.resent
    return result


def import_job_in_its_language(job_id: int, run: Callable[[], T]) -> T:
    """Run a job's worker function in the language of whoever started the job, so that its
    row reasons and summary read as the rest of their pages do."""
    language = ImportJob.objects.filter(pk=job_id).values_list("language", flat=True).first()
    with translation.override(language or None):
        return run()
