"""Webhooks: endpoints, the events every app emits, and their deliveries as recoverable jobs.

Webhooks are a part of annotation, the lowest app, because events come from all three apps
(imports, snapshots and takedowns here; judge jobs and audit statistics from judging;
verified samples and adjudication from review's settlements, which the sweep finds in the
samples' statuses, annotation's own data, so that the review loop's statements stay as they
are): annotation may import neither review nor judging, and both may import annotation.

A delivery is a job row (``core.jobs``): a worker claims it, beats its heartbeat while the
request is out, records the attempt, and either ends it (2xx), or puts it back in the queue
for its next attempt after an exponential backoff, or fails it once its attempts or its
retry window are used up. A worker killed mid-request leaves the job running with a stale
heartbeat: the sweep queues it again and the same message (same ``webhook-id``) is sent
again, so a receiver that drops repeated ids handles it exactly once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import (
    SUBSCRIBABLE,
    Dataset,
    Sample,
    SampleStatus,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookWatermark,
)
from annotation.webhooks import sending
from core import egress
from core.jobs import (
    ACTIVE,
    JobStatus,
    SweepResult,
    job_claim,
    job_enqueue,
    job_finish,
    job_heartbeat,
    job_retry_fields,
    job_send,
    job_sweep,
)
from core.tasks import enqueue

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

TASK = "annotation.deliver_webhook"
IN_PROGRESS = "in progress"
# At most this many sample ids in an event's data (the count says how many there were).
IDS_IN_EVENT = 100
STATUS_EVENTS = {
    WebhookEvent.SAMPLES_VERIFIED: SampleStatus.VERIFIED,
    WebhookEvent.ADJUDICATION_NEEDED: SampleStatus.NEEDS_ADJUDICATION,
}


# --- endpoints -------------------------------------------------------------------------


def webhook_allowed_hosts() -> frozenset[str]:
    """host:port entries endpoints may use although they are not public (loopback, …)."""
    try:
        return egress.parse_allowed_hosts(settings.WEBHOOK_ALLOWED_HOSTS, sending.SETTING)
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from exc


def _reason(reason: str) -> str:
    return {
        "loopback": _("a loopback"),
        "private": _("a private"),
        "link-local": _("a link-local"),
        "cloud metadata": _("a cloud metadata"),
        "non-public": _("a non-public"),
    }.get(reason, reason)


def webhook_url_check(url: str) -> None:
    """ValidationError when deliveries may not go to ``url``: not http(s), or a host that is
    (or resolves to) a loopback, private, link-local or metadata address that
    WEBHOOK_ALLOWED_HOSTS does not list. Checked again on the address of every request."""
    try:
        refusal = egress.check_url(url, webhook_allowed_hosts())
    except egress.EndpointRefused as exc:
        raise ValidationError(
            {"url": _("The URL must start with http:// or https:// and name a host.")},
            code="bad_url",
        ) from exc
    if refusal is not None:
        raise ValidationError(
            {
                "url": _(
                    "%(host)s is %(reason)s address (%(address)s); webhooks go only to public "
                    "addresses unless the setting WEBHOOK_ALLOWED_HOSTS lists %(host)s."
                )
                % {
                    "host": refusal.host_port,
                    "reason": _reason(refusal.reason),
                    "address": refusal.address,
                }
            },
            code="refused_address",
        )


def _events_checked(events: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(events))
    unknown = [e for e in chosen if e not in {str(s) for s in SUBSCRIBABLE}]
    if unknown or not chosen:
        raise ValidationError(
            {
                "events": _("Choose one or more events (known: %(known)s).")
                % {"known": ", ".join(str(e) for e in SUBSCRIBABLE)}
            },
            code="bad_events",
        )
    return chosen


@transaction.atomic
def webhook_endpoint_create(
    *,
    url: str,
    events: Iterable[str],
    dataset: Dataset | None = None,
    description: str = "",
    created_by: User | None = None,
) -> tuple[WebhookEndpoint, str]:
    """Register an endpoint; returns it with its secret, which is shown this once."""
    webhook_url_check(url)
    secret = sending.secret_new()
    endpoint = WebhookEndpoint.objects.create(
        url=url,
        events=_events_checked(events),
        dataset=dataset,
        description=description.strip()[:200],
        secret=secret,
        created_by=created_by,
    )
    return endpoint, secret


def webhook_endpoint_update(
    *,
    endpoint: WebhookEndpoint,
    url: str,
    events: Iterable[str],
    description: str = "",
    enabled: bool = True,
) -> WebhookEndpoint:
    webhook_url_check(url)
    endpoint.url = url
    endpoint.events = _events_checked(events)
    endpoint.description = description.strip()[:200]
    endpoint.enabled = enabled
    endpoint.save(update_fields=["url", "events", "description", "enabled"])
    return endpoint


def webhook_secret_rotate(*, endpoint: WebhookEndpoint) -> str:
    """A new secret (shown once); the old one still signs for WEBHOOK_SECRET_GRACE_SECONDS."""
    secret = sending.secret_new()
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        secret=secret,
        previous_secret=endpoint.secret,
        previous_secret_expires_at=timezone.now()
        + timedelta(seconds=settings.WEBHOOK_SECRET_GRACE_SECONDS),
    )
    endpoint.refresh_from_db()
    return secret


def webhook_endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    endpoint.delete()


def _secrets(endpoint: WebhookEndpoint) -> list[str]:
    kept = endpoint.previous_secret_expires_at
    old = endpoint.previous_secret if kept is not None and kept > timezone.now() else ""
    return [endpoint.secret, old]


# --- events ----------------------------------------------------------------------------


def _endpoints_for(event: str, dataset_id: int | None) -> list[WebhookEndpoint]:
    rows = WebhookEndpoint.objects.filter(enabled=True)
    rows = rows.filter(Q(dataset__isnull=True) | Q(dataset_id=dataset_id)) if dataset_id else rows
    return [e for e in rows if event in e.events or event == WebhookEvent.TEST]


def _delivery_new(endpoint: WebhookEndpoint, event: str, data: dict[str, Any]) -> WebhookDelivery:
    now = timezone.now()
    message_id = sending.message_id_new()
    payload = {"type": event, "timestamp": now.isoformat(), "data": data}
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint,
        event=event,
        message_id=message_id,
        payload=payload,
        next_attempt_at=now,
        queued_at=now,
    )
    transaction.on_commit(lambda: _enqueue(delivery.pk))
    return delivery


def _enqueue(delivery_id: int) -> None:
    job_enqueue(WebhookDelivery, delivery_id, lambda: enqueue(TASK, delivery_id))


def webhook_event_emit(
    *, event: str, dataset: Dataset | int | None, data: dict[str, Any]
) -> list[WebhookDelivery]:
    """Record a delivery of ``event`` to every enabled endpoint that wants it (the dataset's
    and the site-wide ones); each is sent once the caller's transaction commits. ``data``
    gets the dataset's id and name."""
    dataset_id = dataset.pk if isinstance(dataset, Dataset) else dataset
    endpoints = _endpoints_for(event, dataset_id)
    if not endpoints:
        return []
    if dataset_id is not None:
        name = (
            dataset.name
            if isinstance(dataset, Dataset)
            else Dataset.objects.filter(pk=dataset_id).values_list("name", flat=True).first()
        )
        data = {"dataset": {"id": dataset_id, "name": name}, **data}
    with transaction.atomic():
        return [_delivery_new(endpoint, event, data) for endpoint in endpoints]


def webhook_test_send(*, endpoint: WebhookEndpoint, by: User | None) -> WebhookDelivery:
    """Send a test event to one endpoint (enabled or not)."""
    with transaction.atomic():
        return _delivery_new(
            endpoint,
            WebhookEvent.TEST,
            {
                "message": "A test event from the review studio.",
                "sent_by": by.get_username() if by is not None else None,
                "endpoint": endpoint.pk,
            },
        )


def webhook_redeliver(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send an ended delivery again, as the same message (same webhook-id), its attempts
    counted anew; the earlier attempts stay in its log."""
    if delivery.status in ACTIVE:
        raise ValidationError(_("This delivery is still being tried."), code="active")
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        **job_retry_fields(), tries=0, next_attempt_at=now, finished_at=None
    )
    transaction.on_commit(lambda: _enqueue(delivery.pk))
    delivery.refresh_from_db()
    return delivery


# --- delivering ------------------------------------------------------------------------


def _next_attempt(delivery: WebhookDelivery, tries: int) -> tuple[float, bool]:
    """(seconds to wait, whether it may still be tried) after ``tries`` failed attempts."""
    wait = sending.backoff_seconds(
        tries,
        base=settings.WEBHOOK_BACKOFF_SECONDS,
        cap=settings.WEBHOOK_BACKOFF_MAX_SECONDS,
    )
    window_ends = delivery.created_at + timedelta(seconds=settings.WEBHOOK_RETRY_WINDOW_SECONDS)
    may = tries < settings.WEBHOOK_MAX_ATTEMPTS and (
        timezone.now() + timedelta(seconds=wait) <= window_ends
    )
    return wait, may


def _outcome_text(outcome: sending.Outcome) -> str:
    if outcome.status_code is not None:
        return _("HTTP %(status)s") % {"status": outcome.status_code} + (
            f" ({outcome.error})" if outcome.error else ""
        )
    return outcome.error


def webhook_delivery_run(*, delivery_id: int) -> WebhookDelivery | None:
    """Make the delivery's next attempt, if it is due and no other worker makes it."""
    now = timezone.now()
    due = (
        WebhookDelivery.objects.filter(pk=delivery_id)
        .values_list("status", "next_attempt_at")
        .first()
    )
    if due is None or due[0] not in ACTIVE:
        return WebhookDelivery.objects.filter(pk=delivery_id).first()
    if due[0] == JobStatus.QUEUED and due[1] is not None and due[1] > now + timedelta(seconds=1):
        # Early (a message sent again): its own delayed message, or the sweep, sends it.
        return WebhookDelivery.objects.filter(pk=delivery_id).first()
    claim = job_claim(WebhookDelivery, delivery_id)
    if claim is None:
        return WebhookDelivery.objects.filter(pk=delivery_id).first()
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    # An attempt a killed worker left unfinished says so.
    WebhookAttempt.objects.filter(delivery=delivery, error=IN_PROGRESS).update(
        error=_("The worker stopped during this attempt; the message was sent again.")
    )
    number = delivery.tries + 1
    logged = WebhookAttempt.objects.filter(delivery=delivery).count() + 1
    endpoint = delivery.endpoint
    body = sending.body_of(delivery.payload)
    headers = sending.signed_headers(
        message_id=delivery.message_id,
        body=body,
        secrets_in_use=_secrets(endpoint),
        at=timezone.now(),
    )
    attempt = WebhookAttempt.objects.create(
        delivery=delivery,
        number=logged,
        url=endpoint.url,
        request_headers=headers,
        request_body=body,
        error=IN_PROGRESS,
        started_at=timezone.now(),
    )
    with job_heartbeat(claim):
        outcome = sending.send(
            endpoint.url,
            body=body,
            headers=headers,
            allowed=webhook_allowed_hosts(),
            timeout_s=settings.WEBHOOK_TIMEOUT_SECONDS,
        )
    WebhookAttempt.objects.filter(pk=attempt.pk).update(
        status_code=outcome.status_code,
        response_body=outcome.response_body,
        error=outcome.error,
        duration_ms=outcome.duration_ms,
    )
    if outcome.succeeded:
        job_finish(
            claim,
            status=JobStatus.SUCCEEDED,
            message=_("Delivered on attempt %(n)s.") % {"n": number},
            tries=number,
            last_status_code=outcome.status_code,
            next_attempt_at=None,
        )
    else:
        wait, may = _next_attempt(delivery, number)
        if may:
            at = timezone.now() + timedelta(seconds=wait)
            moved = claim.mine().update(
                status=JobStatus.QUEUED,
                attempts=0,
                tries=number,
                next_attempt_at=at,
                queued_at=at,
                last_status_code=outcome.status_code,
                message=_("Attempt %(n)s failed: %(why)s. Next attempt at %(at)s.")
                % {"n": number, "why": _outcome_text(outcome), "at": at.isoformat()},
            )
            if moved:
                job_send(lambda: enqueue(TASK, delivery_id, countdown=wait))
        else:
            job_finish(
                claim,
                status=JobStatus.FAILED,
                message=_(
                    "Failed after %(n)s attempts (the last: %(why)s); its retry window or "
                    "attempts are used up. Redeliver to send it again."
                )
                % {"n": number, "why": _outcome_text(outcome)},
                tries=number,
                last_status_code=outcome.status_code,
                next_attempt_at=None,
            )
    return WebhookDelivery.objects.filter(pk=delivery_id).first()


# --- the sweep -------------------------------------------------------------------------


def webhooks_sweep() -> SweepResult:
    """Run by annotation's job sweep: take over deliveries whose worker died, send those
    whose message was lost (a delivery waiting for its next attempt counts from then), and
    emit the events found in samples' statuses."""
    result = job_sweep(WebhookDelivery, send=lambda pk: enqueue(TASK, pk))
    webhook_status_events()
    return result


def webhook_status_events() -> int:
    """Emit samples.verified and adjudication.needed for each watched dataset whose samples
    reached that status since the last sweep (one event per dataset and sweep, with the
    count and the first ids); returns the events emitted. A dataset starts to be watched
    when an endpoint first wants the event: earlier samples are not sent."""
    emitted = 0
    now = timezone.now()
    endpoints = list(WebhookEndpoint.objects.filter(enabled=True).only("dataset_id", "events"))
    for event, status in STATUS_EVENTS.items():
        wanting = [e for e in endpoints if event in e.events]
        if not wanting:
            continue
        if any(e.dataset_id is None for e in wanting):
            datasets = list(Dataset.objects.values_list("pk", flat=True))
        else:
            datasets = sorted({e.dataset_id for e in wanting if e.dataset_id is not None})
        for dataset_id in datasets:
            with transaction.atomic():
                mark = (
                    WebhookWatermark.objects.select_for_update()
                    .filter(dataset_id=dataset_id, event=event)
                    .first()
                )
                if mark is None:
                    WebhookWatermark.objects.create(
                        dataset_id=dataset_id, event=event, seen_until=now
                    )
                    continue
                reached = Sample.objects.filter(
                    dataset_id=dataset_id, status=status, updated_at__gt=mark.seen_until
                )
                latest = reached.aggregate(at=Max("updated_at"))["at"]
                if latest is None:
                    continue
                ids = list(
                    reached.order_by("updated_at", "id").values_list("external_id", flat=True)[
                        :IDS_IN_EVENT
                    ]
                )
                count = reached.count()
                WebhookWatermark.objects.filter(pk=mark.pk).update(seen_until=latest)
                webhook_event_emit(
                    event=event,
                    dataset=dataset_id,
                    data={
                        "status": str(status),
                        "count": count,
                        "external_ids": ids,
                        "since": mark.seen_until.isoformat(),
                        "until": latest.isoformat(),
                    },
                )
                emitted += 1
    return emitted
