"""Webhooks: the endpoints leads register, each delivery (a recoverable job), its attempts, and
the watermarks of the events the sweep finds in samples' statuses."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.models.datasets import Dataset
from core.fields import created_by_field
from core.jobs import JobStatus, RecoverableJob


class WebhookEvent(models.TextChoices):
    IMPORT_FINISHED = "import.finished", _("An import finished")
    SAMPLES_VERIFIED = "samples.verified", _("Samples were verified (in a batch)")
    ADJUDICATION_NEEDED = "adjudication.needed", _("Samples need adjudication")
    JUDGE_JOB_FINISHED = "judge_job.finished", _("A judge job finished")
    AUDIT_STATISTICS_COMPUTED = "audit.statistics_computed", _("Audit statistics were computed")
    SNAPSHOT_BUILT = "snapshot.built", _("A snapshot was built")
    TAKEDOWN = "samples.taken_down", _("Samples were taken down")
    TEST = "webhook.test", _("Test event")


SUBSCRIBABLE = [e for e in WebhookEvent if e != WebhookEvent.TEST]


class WebhookEndpoint(models.Model):
    """Where a lead wants a dataset's (or, without a dataset, every dataset's) events sent.

    ``secret`` signs the deliveries (Standard Webhooks, ``whsec_`` + base64); it is shown once,
    when made or rotated. After a rotation the previous secret signs too, beside the new
    one, until ``previous_secret_expires_at``, so receivers can switch without a gap.
    """

    dataset = models.ForeignKey(
        Dataset,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="webhook_endpoints",
        verbose_name=_("dataset"),
    )
    url = models.URLField(_("URL"), max_length=500)
    description = models.CharField(_("description"), max_length=200, blank=True, default="")
    events = models.JSONField(_("events"), default=list)
    secret = models.CharField(_("signing secret"), max_length=100)
    previous_secret = models.CharField(max_length=100, blank=True, default="")
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    enabled = models.BooleanField(_("enabled"), default=True)
    created_by = created_by_field()
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("webhook endpoint")
        verbose_name_plural = _("webhook endpoints")

    def __str__(self) -> str:
        return self.url


class WebhookDelivery(RecoverableJob):
    """One event sent to one endpoint: a job row, tried until the endpoint answers 2xx, with
    exponential backoff between attempts, or failed once its attempts or its retry window
    run out. Every attempt carries the same ``message_id`` (the ``webhook-id`` header), so a
    receiver can drop a repeat."""

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.CharField(_("event"), max_length=40)
    message_id = models.CharField(_("webhook id"), max_length=60, unique=True)
    payload = models.JSONField(_("payload"))
    status = models.CharField(
        _("status"), max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED
    )
    tries = models.PositiveSmallIntegerField(_("attempts made"), default=0)
    next_attempt_at = models.DateTimeField(_("next attempt"), null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(_("last status"), null=True, blank=True)
    message = models.TextField(_("message"), blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("webhook delivery")
        verbose_name_plural = _("webhook deliveries")
        indexes = [
            models.Index(fields=["endpoint", "-created_at"], name="webhook_delivery_endpoint_idx"),
            models.Index(
                fields=["next_attempt_at"],
                name="webhook_delivery_due_idx",
                condition=Q(status="queued"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event} to {self.endpoint_id} ({self.message_id})"


class WebhookAttempt(models.Model):
    """One HTTP request of a delivery: what was sent, and the answer or the error."""

    delivery = models.ForeignKey(
        WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log"
    )
    number = models.PositiveSmallIntegerField(_("attempt"))
    url = models.URLField(_("URL"), max_length=500)
    request_headers = models.JSONField(_("request headers"), default=dict)
    request_body = models.TextField(_("request body"))
    status_code = models.PositiveSmallIntegerField(_("status"), null=True, blank=True)
    response_body = models.TextField(_("response"), blank=True, default="")
    error = models.TextField(_("error"), blank=True, default="")
    duration_ms = models.FloatField(_("duration (ms)"), null=True, blank=True)
    started_at = models.DateTimeField(_("started at"))

    class Meta:
        ordering = ["delivery", "number", "id"]
        verbose_name = _("webhook attempt")
        verbose_name_plural = _("webhook attempts")

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.number}: {self.status_code or self.error[:40]}"

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class WebhookWatermark(models.Model):
    """How far the sweep has looked for an event found in samples' statuses (verified,
    needing adjudication) in one dataset: samples changed after ``seen_until`` are new."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    event = models.CharField(max_length=40)
    seen_until = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "event"], name="uniq_webhook_watermark")
        ]

    def __str__(self) -> str:
        return f"{self.event} of {self.dataset_id} until {self.seen_until}"
