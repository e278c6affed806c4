"""Snapshots: frozen, versioned releases of a dataset's samples."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from annotation.models.datasets import Dataset
from annotation.models.samples import Sample
from core.fields import created_by_field
from core.jobs import JobStatus, RecoverableJob


class Snapshot(RecoverableJob):
    """A named, immutable export of a dataset at a moment, built by a worker."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="snapshots")
    name = models.CharField(_("name"), max_length=200)
    format = models.CharField(_("format"), max_length=20)
    filter = models.JSONField(_("filter"), default=dict, blank=True)
    status = models.CharField(
        _("status"), max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED
    )
    message = models.TextField(_("message"), blank=True, default="")
    total = models.PositiveIntegerField(_("samples in total"), null=True, blank=True)
    done = models.PositiveIntegerField(_("samples done"), default=0)
    file = models.FileField(_("file"), max_length=500, blank=True, default="")
    manifest = models.JSONField(_("manifest"), default=dict, blank=True)
    previous = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_by = created_by_field()
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="uniq_snapshot_name")
        ]
        verbose_name = _("snapshot")
        verbose_name_plural = _("snapshots")

    def __str__(self) -> str:
        return f"{self.dataset_id}:{self.name}"

    @property
    def file_names(self) -> dict[str, str]:
        """The stored files of a finished snapshot: the release and its manifest."""
        if self.status != JobStatus.SUCCEEDED or not self.file:
            return {}
        name = self.file.name
        return {"release": name, "manifest": name.rsplit("/", 1)[0] + "/manifest.json"}

    @property
    def left_out(self) -> int:
        """Selected samples the format had no place for (the MMOOC layout holds only the OOC
        and shifted in-context groups)."""
        notes = (self.manifest or {}).get("notes") or {}
        return int(notes.get("skipped_not_ooc_or_ic") or 0)


class SnapshotEntry(models.Model):
    """One sample as it went into a snapshot: what the next snapshot's diff compares with."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="entries")
    sample = models.ForeignKey(Sample, on_delete=models.SET_NULL, null=True, related_name="+")
    external_id = models.CharField(max_length=200)
    content_hash = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "external_id"], name="uniq_snapshot_entry")
        ]
        verbose_name = _("snapshot entry")
        verbose_name_plural = _("snapshot entries")

    def __str__(self) -> str:
        return f"{self.snapshot_id}:{self.external_id}"


class SnapshotContent(models.Model):
    """A sample's contents by content hash, as a snapshot exported it: the label fields, the
    custom fields (``extra.<key>``) and the media (``role/position: sha256``). Shared by every
    entry with that hash, so a snapshot adds rows only for samples that changed; what the
    comparison of two snapshots reads to show a changed sample's fields old → new."""

    content_hash = models.CharField(max_length=64, primary_key=True)
    fields = models.JSONField(default=dict)

    class Meta:
        verbose_name = _("snapshot content")
        verbose_name_plural = _("snapshot contents")

    def __str__(self) -> str:
        return self.content_hash
