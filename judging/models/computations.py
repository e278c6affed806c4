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
from django.utils.translation import gettext_lazy as _

from annotation.models import Dataset
from core.computations import StoredComputation
from judging.models.audit import AuditSet, AuditTask


class ComputationKind(models.TextChoices):
    AUDIT_STATISTICS = "audit_statistics", _("Audit statistics")
    FRAME_STRATA = "frame_strata", _("Sampling frame strata")


class AuditComputation(StoredComputation):
    """A stored computation and the state of its next run (queued → running → succeeded)."""

    kind = models.CharField(_("kind"), max_length=20, choices=ComputationKind.choices)
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    audit_set = models.ForeignKey(
        AuditSet, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    task = models.CharField(_("task"), max_length=20, choices=AuditTask.choices)

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
