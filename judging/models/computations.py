"""Figures computed by a worker, off the request path, and stored for pages and the API to read.

One row per audit set (its statistics, PPI-corrected scores included, which the leaderboard
shows) and one per dataset and audit task (the sizes of the sampling frame's strata, which the
audit planner previews). A change to the data behind a row (a rating, a finished judge job, an
import, a new audit) *requests* it: the row is queued once and computed a few seconds later,
so a burst of changes costs one computation; a request while it runs queues one more run after
it. The stored result stays readable throughout, with the time it was computed.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from annotation.models import Dataset, JobStatus
from core.jobs import RecoverableJob
from judging.models.audit import AuditSet, AuditTask


class ComputationKind(models.TextChoices):
    AUDIT_STATISTICS = "audit_statistics", _("Audit statistics")
    FRAME_STRATA = "frame_strata", _("Sampling frame strata")


class AuditComputation(RecoverableJob):
    """A stored computation and the state of its next run (queued → running → succeeded)."""

    kind = models.CharField(_("kind"), max_length=20, choices=ComputationKind.choices)
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    audit_set = models.ForeignKey(
        AuditSet, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    task = models.CharField(_("task"), max_length=20, choices=AuditTask.choices)
    status = models.CharField(
        _("status"), max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED
    )
    message = models.TextField(_("message"), blank=True, default="")
    # The last time the data behind the row changed, and the time the current (or last) run
    # read it: a run whose start is older than the last request is followed by another.
    requested_at = models.DateTimeField(_("requested at"), default=timezone.now)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    # The stored result and the time of the data it reflects (its run's start).
    computed_at = models.DateTimeField(_("computed at"), null=True, blank=True)
    seconds = models.FloatField(_("seconds taken"), null=True, blank=True)
    result = models.JSONField(_("result"), null=True, blank=True)

    class Meta:
        verbose_name = _("audit computation")
        verbose_name_plural = _("audit computations")
        constraints = [
            models.UniqueConstraint(
                fields=["audit_set"],
                condition=Q(kind="audit_statistics"),
                name="uniq_audit_statistics_per_set",
            ),
            models.UniqueConstraint(
                fields=["dataset", "task"],
                condition=Q(kind="frame_strata"),
                name="uniq_frame_strata_per_dataset_task",
            ),
            models.CheckConstraint(
                condition=Q(kind="frame_strata", audit_set__isnull=True)
                | Q(kind="audit_statistics", audit_set__isnull=False),
                name="audit_computation_scope",
            ),
        ]

    def __str__(self) -> str:
        scope = f"audit set {self.audit_set_id}" if self.audit_set_id else self.task
        return f"{self.kind} of dataset {self.dataset_id} ({scope})"

    @property
    def computing(self) -> bool:
        """A newer result is queued or being computed."""
        return self.status in (JobStatus.QUEUED, JobStatus.RUNNING)
