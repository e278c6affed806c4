"""Import jobs (of every kind), their rejected rows, the versions imports recorded, and bulk
actions run by a worker."""

from __future__ import annotations

from django.db import models
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from annotation.models.datasets import Dataset
from annotation.models.samples import Sample
from core.fields import created_by_field
from core.jobs import JobStatus, RecoverableJob


class ImportJobStatus(models.TextChoices):
    """JobStatus, plus the end of an import that rejected some rows but not all."""

    QUEUED = JobStatus.QUEUED.value, JobStatus.QUEUED.label
    RUNNING = JobStatus.RUNNING.value, JobStatus.RUNNING.label
    SUCCEEDED = JobStatus.SUCCEEDED.value, JobStatus.SUCCEEDED.label
    SUCCEEDED_WITH_ERRORS = "succeeded_with_errors", _("Finished with errors")
    FAILED = JobStatus.FAILED.value, JobStatus.FAILED.label
    CANCELLED = JobStatus.CANCELLED.value, JobStatus.CANCELLED.label


class ImportKind(models.TextChoices):
    """What an import brings in: candidate samples, or (for the judging app) evaluated models'
    responses and verdicts made elsewhere. Each kind is run by its own task (see
    ``annotation.imports.kinds``) and shares the job's page, progress, errors and recovery."""

    SAMPLES = "samples", _("Samples")
    RESPONSES = "responses", _("Model responses")
    VERDICTS = "verdicts", _("Verdicts")


class ImportSourceKind(models.TextChoices):
    UPLOAD = "upload", _("Uploaded file")
    SERVER_PATH = "server_path", _("Path on the server")
    S3_PREFIX = "s3_prefix", _("S3 prefix")


def active_language() -> str:
    """The language active where a job is created (the lead's, in a request)."""
    return translation.get_language() or ""


class ImportJob(RecoverableJob):
    """One import of candidate samples into a dataset, run by a worker, with live progress."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="import_jobs")
    created_by = created_by_field()
    kind = models.CharField(
        _("kind"), max_length=20, choices=ImportKind.choices, default=ImportKind.SAMPLES
    )
    source_kind = models.CharField(
        _("source kind"), max_length=20, choices=ImportSourceKind.choices
    )
    # An uploaded file's storage name, a server path, or s3://bucket/prefix.
    source = models.CharField(_("source"), max_length=1000)
    source_name = models.CharField(_("file name"), max_length=300, blank=True, default="")
    format = models.CharField(_("format"), max_length=30)
    options = models.JSONField(_("options"), default=dict, blank=True)
    # The worker writes the job's reasons and summary in the language of whoever started it.
    language = models.CharField(_("language"), max_length=16, blank=True, default=active_language)
    # Set only by the import_samples command (an operator): its server path may lie outside
    # IMPORT_SERVER_ROOTS. Every other server path is checked, file by file, at run time too.
    trusted = models.BooleanField(_("reads any server path"), default=False)
    status = models.CharField(
        _("status"), max_length=32, choices=ImportJobStatus.choices, default=ImportJobStatus.QUEUED
    )
    total_rows = models.PositiveIntegerField(_("rows in total"), null=True, blank=True)
    rows_done = models.PositiveIntegerField(_("rows done"), default=0)
    imported = models.PositiveIntegerField(_("imported"), default=0)
    unchanged = models.PositiveIntegerField(_("unchanged"), default=0)
    updated = models.PositiveIntegerField(_("updated"), default=0)
    rejected = models.PositiveIntegerField(_("rejected"), default=0)
    message = models.TextField(_("message"), blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["dataset", "kind", "-created_at"], name="import_job_kind_idx")
        ]
        verbose_name = _("import job")
        verbose_name_plural = _("import jobs")

    def __str__(self) -> str:
        return f"import {self.pk} into {self.dataset_id}"


class ImportRowError(models.Model):
    """A row an import rejected, with its line or index and a reason a person understands."""

    job = models.ForeignKey(ImportJob, on_delete=models.CASCADE, related_name="row_errors")
    row = models.PositiveIntegerField(_("row"))
    external_id = models.CharField(_("external id"), max_length=200, blank=True, default="")
    message = models.TextField(_("message"))

    class Meta:
        ordering = ["job", "row", "id"]
        verbose_name = _("import row error")
        verbose_name_plural = _("import row errors")

    def __str__(self) -> str:
        return f"row {self.row}: {self.message[:60]}"


class ImportedVersion(models.Model):
    """A sample as its source last gave it: what a re-import compares an incoming row with.

    ``values`` holds the label fields and ``media`` the [role, position, sha256] slots of that
    row, ``content_hash`` their hash. ``conflicts`` lists the fields that the source changed
    after a reviewer had corrected them: {"field", "reviewed", "imported", "previous", "job"};
    the sample keeps the reviewed value until adjudication.
    """

    sample = models.OneToOneField(Sample, on_delete=models.CASCADE, related_name="imported_version")
    job = models.ForeignKey(
        ImportJob, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    content_hash = models.CharField(_("content hash"), max_length=64)
    values = models.JSONField(_("imported values"), default=dict)
    media = models.JSONField(_("imported media"), default=list)
    conflicts = models.JSONField(_("conflicts with review"), default=list, blank=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("imported version")
        verbose_name_plural = _("imported versions")

    def __str__(self) -> str:
        return f"{self.sample_id} as imported"


class SampleBulkJob(RecoverableJob):
    """A bulk action on more samples than a web request should move (the sample list's
    filter and chosen ids as they were asked), run by a worker in one transaction."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="bulk_jobs")
    action = models.CharField(_("action"), max_length=32)
    # The sample list's filter (its query string), the chosen ids (null: every sample
    # the filter matches), the priority and the reason.
    params = models.JSONField(_("parameters"), default=dict, blank=True)
    status = models.CharField(
        _("status"), max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED
    )
    selected = models.PositiveIntegerField(_("samples selected"), default=0)
    changed = models.PositiveIntegerField(_("samples changed"), default=0)
    skipped = models.PositiveIntegerField(_("samples left alone"), default=0)
    slots_opened = models.PositiveIntegerField(_("review slots opened"), default=0)
    message = models.TextField(_("message"), blank=True, default="")
    created_by = created_by_field()
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("bulk action")
        verbose_name_plural = _("bulk actions")

    def __str__(self) -> str:
        return f"{self.action} on {self.dataset_id} ({self.status})"
