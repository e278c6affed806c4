"""A test of a judge: one small call made by a worker (where the judges' keys are), with its
latency and parsed reply, or the exact reason the judge cannot answer."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from annotation.models import JobStatus
from core.fields import created_by_field
from core.jobs import RecoverableJob
from judging.models.judges import Judge


class JudgeCheck(RecoverableJob):
    """One test call to a judge, queued from the judges page and run by a worker."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="checks")
    created_by = created_by_field()
    status = models.CharField(
        _("status"), max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED
    )
    message = models.TextField(_("message"), blank=True, default="")
    ok = models.BooleanField(_("answered"), null=True, blank=True)
    latency_ms = models.PositiveIntegerField(_("latency (ms)"), null=True, blank=True)
    reply = models.TextField(_("reply"), blank=True, default="")
    error_kind = models.CharField(_("error kind"), max_length=32, blank=True, default="")
    error = models.TextField(_("error"), blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("judge test")
        verbose_name_plural = _("judge tests")

    def __str__(self) -> str:
        return f"test {self.pk} of {self.judge_id}"
