"""Reads of the webhook pages: endpoints with their latest delivery, a delivery's log."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from annotation.models import Dataset, WebhookAttempt, WebhookDelivery, WebhookEndpoint

DELIVERIES_SHOWN = 50


def webhook_endpoints(*, dataset: Dataset | None = None) -> QuerySet[WebhookEndpoint]:
    """The dataset's endpoints (or every endpoint), with their delivery counts."""
    rows = WebhookEndpoint.objects.select_related("dataset").annotate(
        delivered=Count("deliveries", filter=Q(deliveries__status="succeeded")),
        failed=Count("deliveries", filter=Q(deliveries__status="failed")),
        pending=Count("deliveries", filter=Q(deliveries__status__in=["queued", "running"])),
    )
    return rows.filter(dataset=dataset) if dataset is not None else rows


def webhook_endpoint_get(*, endpoint_id: int) -> WebhookEndpoint | None:
    return WebhookEndpoint.objects.select_related("dataset").filter(pk=endpoint_id).first()


def webhook_deliveries(*, endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    return WebhookDelivery.objects.filter(endpoint=endpoint).order_by("-created_at", "-id")[
        :DELIVERIES_SHOWN
    ]


def webhook_delivery_get(*, delivery_id: int) -> WebhookDelivery | None:
    return (
        WebhookDelivery.objects.select_related("endpoint", "endpoint__dataset")
        .filter(pk=delivery_id)
        .first()
    )


def webhook_attempts(*, delivery: WebhookDelivery) -> QuerySet[WebhookAttempt]:
    return WebhookAttempt.objects.filter(delivery=delivery).order_by("number", "id")
