"""Reads of imports: a dataset's jobs, one job, the rows it rejected, and the fields a
re-import could not apply because a reviewer had corrected them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import F, QuerySet

from annotation.models import (
    Dataset,
    ImportedVersion,
    ImportJob,
    ImportKind,
    ImportRowError,
    MediaAsset,
    Sample,
    SampleStatus,
)
from core.lookups import AnyOf


def import_job_list(
    *, dataset: Dataset, kinds: tuple[str, ...] = (ImportKind.SAMPLES,)
) -> QuerySet[ImportJob]:
    """A dataset's import jobs of these kinds, newest first, with who started them, in one
    query."""
    return (
        ImportJob.objects.filter(dataset=dataset, kind__in=kinds)
        .select_related("created_by")
        .order_by("-created_at", "-id")
    )


def import_job_get(*, job_id: int) -> ImportJob | None:
    return ImportJob.objects.select_related("dataset", "created_by").filter(pk=job_id).first()


def import_stored_media(hashes: list[str]) -> set[str]:
    """Which of these sha256 hashes are stored as assets already (one index lookup): the
    files an import's reader need not decode."""
    return set(
        MediaAsset.objects.filter(AnyOf(F("sha256"), hashes)).values_list("sha256", flat=True)
    )


def import_row_errors(*, job: ImportJob) -> QuerySet[ImportRowError]:
    """The rows a job rejected, in file order."""
    return ImportRowError.objects.filter(job=job).order_by("row", "id")


@dataclass(frozen=True)
class ImportConflict:
    """A field the source changed after a reviewer had corrected it, for adjudication.

    The sample holds ``reviewed``; ``imported`` is what the source says now and ``previous``
    what it said at the import before (None when that was not recorded).
    """

    field: str
    reviewed: Any
    imported: Any
    previous: Any
    job_id: int | None


def import_conflicts(*, sample: Sample) -> list[ImportConflict]:
    """The open conflicts between a sample's source and its review, in field order.

    Open while the sample awaits adjudication; once it has moved on they are settled (and the
    next re-import drops them).
    """
    if sample.status != SampleStatus.NEEDS_ADJUDICATION:
        return []
    version = ImportedVersion.objects.filter(sample=sample).only("conflicts").first()
    if version is None:
        return []
    return [
        ImportConflict(
            field=str(c.get("field", "")),
            reviewed=c.get("reviewed"),
            imported=c.get("imported"),
            previous=c.get("previous"),
            job_id=c.get("job"),
        )
        for c in version.conflicts or []
    ]
