"""Webhook deliveries with real Celery workers on Redis and a receiver on loopback that
verifies every signature (standardwebhooks) and dedupes by webhook-id: retries after a 500
and a timeout with the backoff's delayed messages, and a worker SIGKILLed mid-request whose
delivery the sweep takes over, handled exactly once by the receiver."""

from __future__ import annotations

import os
from typing import Any

import pytest

from annotation.models import JobStatus, WebhookAttempt, WebhookDelivery
from annotation.webhooks import services
from tests.conftest import worker_on
from tests.support.processes import kill_worker, wait_until
from tests.support.webhook_receiver import webhook_receiver

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def _worker_env(host_port: str, **extra: str) -> dict[str, str]:
    return {
        "WEBHOOK_ALLOWED_HOSTS": host_port,
        "WEBHOOK_TIMEOUT_SECONDS": "1",
        "WEBHOOK_BACKOFF_SECONDS": "0.5",
        **extra,
    }


def test_a_real_worker_retries_a_500_and_a_timeout_and_delivers_the_third(
    transactional_db: None, settings: Any
) -> None:
    """The worker makes the attempts itself, the waits between them sent as delayed
    messages; the receiver verified all three requests, handled the third."""
    with webhook_receiver([], script={1: "500", 2: "hang"}, hang_seconds=3) as receiver:
        settings.WEBHOOK_ALLOWED_HOSTS = [receiver.host_port]
        endpoint, secret = services.webhook_endpoint_create(
            url=receiver.url, events=["import.finished"]
        )
        receiver.secrets.append(secret)
        with worker_on(os.environ["REDIS_URL"], _worker_env(receiver.host_port)):
            delivery = services.webhook_test_send(endpoint=endpoint, by=None)
            wait_until(
                lambda: WebhookDelivery.objects.get(pk=delivery.pk).status == JobStatus.SUCCEEDED,
                timeout=60,
                what="the third attempt to be delivered",
            )
    delivery.refresh_from_db()
    assert delivery.tries == 3, delivery.message
    codes = list(
        WebhookAttempt.objects.filter(delivery=delivery)
        .order_by("number")
        .values_list("status_code", flat=True)
    )
    assert codes == [500, None, 200]
    assert receiver.bad_signatures == 0 and len(receiver.requests) == 3
    assert receiver.handled == {delivery.message_id: 1}
    gaps = [
        b["at"] - a["at"] for a, b in zip(receiver.requests, receiver.requests[1:], strict=False)
    ]
    assert gaps[0] >= 0.5 and gaps[1] >= 1.0  # the backoff doubled (plus the timeout)


def test_a_delivery_whose_worker_was_killed_mid_request_is_delivered_once(
    transactional_db: None, settings: Any
) -> None:
    """The receiver holds the first request while the worker is SIGKILLed; the sweep of a
    new worker sends the message again (the same webhook-id), which the receiver handles
    once; the log says the first attempt's worker stopped."""
    broker = os.environ["REDIS_URL"]
    with webhook_receiver([], script={1: "block"}) as receiver:
        settings.WEBHOOK_ALLOWED_HOSTS = [receiver.host_port]
        endpoint, secret = services.webhook_endpoint_create(
            url=receiver.url, events=["import.finished"]
        )
        receiver.secrets.append(secret)
        recovery = {
            "JOB_SWEEP_SECONDS": "1",
            "JOB_STALE_SECONDS": "3",
            "JOB_HEARTBEAT_SECONDS": "1",
        }
        env = _worker_env(receiver.host_port, WEBHOOK_TIMEOUT_SECONDS="60", **recovery)
        with worker_on(broker, env) as worker:
            delivery = services.webhook_test_send(endpoint=endpoint, by=None)
            assert receiver.blocked.wait(30), "the first request never came"
            assert WebhookDelivery.objects.get(pk=delivery.pk).status == JobStatus.RUNNING
            kill_worker(worker)
        receiver.release.set()
        with worker_on(broker, env, beat=True):
            wait_until(
                lambda: WebhookDelivery.objects.get(pk=delivery.pk).status == JobStatus.SUCCEEDED,
                timeout=90,
                what="the sweep to deliver the message again",
            )
    assert receiver.seen[delivery.message_id] == 2
    assert receiver.handled == {delivery.message_id: 1} and receiver.duplicates == 1
    attempts = list(WebhookAttempt.objects.filter(delivery=delivery).order_by("number"))
    assert "worker stopped" in attempts[0].error
    assert attempts[-1].status_code == 200
