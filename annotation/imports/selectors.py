"""Reads of imports: a dataset's jobs, one job, and the rows it rejected."""

from __future__ import annotations

from django.db.models import QuerySet

from annotation.models import Dataset, ImportJob, ImportRowError


def import_job_list(*, dataset: Dataset) -> QuerySet[ImportJob]:
    """A dataset's import jobs, newest first, with who started them, in one query."""
    return (
        ImportJob.objects.filter(dataset=dataset)
        .select_related("created_by")
        .order_by("-created_at", "-id")
    )


def import_job_get(*, job_id: int) -> ImportJob | None:
    return ImportJob.objects.select_related("dataset", "created_by").filter(pk=job_id).first()


def import_row_errors(*, job: ImportJob) -> QuerySet[ImportRowError]:
    """The rows a job rejected, in file order."""
    return ImportRowError.objects.filter(job=job).order_by("row", "id")
