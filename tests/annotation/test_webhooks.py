"""Webhooks (annotation.webhooks): endpoints under the judges' egress rules, deliveries as
recoverable jobs with exponential backoff, signed as Standard Webhooks say and verified by a
receiver on loopback (allowed by the test's setting) with the standardwebhooks library, the
events every app emits, and the pages of endpoints and delivery logs."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import hypothesis
import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from hypothesis import strategies as st

from annotation.models import (
    JobStatus,
    Sample,
    SampleStatus,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from annotation.services import samples_take_down
from annotation.webhooks import sending, services
from tests.annotation.factories import mmooc_dataset, mmooc_sample
from tests.support.webhook_receiver import Receiver, webhook_receiver

pytestmark = pytest.mark.django_db

ALL = [str(e) for e in WebhookEvent if e != WebhookEvent.TEST]


def endpoint_for(receiver: Receiver, settings: Any, **kwargs: Any) -> WebhookEndpoint:
    settings.WEBHOOK_ALLOWED_HOSTS = [receiver.host_port]
    endpoint, secret = services.webhook_endpoint_create(
        url=receiver.url, events=kwargs.pop("events", ALL), **kwargs
    )
    receiver.secrets.append(secret)
    return endpoint


def due(delivery: WebhookDelivery) -> None:
    """Skip the backoff wait (the test makes the next attempt itself)."""
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())


def run(delivery: WebhookDelivery) -> WebhookDelivery:
    done = services.webhook_delivery_run(delivery_id=delivery.pk)
    assert done is not None
    return done


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:9999/hook", "a loopback address"),
        ("http://localhost/hook", "a loopback address"),
        ("http://10.1.2.3/hook", "a private address"),
        ("http://169.254.169.254/latest/meta-data", "a cloud metadata address"),
        ("http://[fe80::1]/hook", "a link-local address"),
        ("ftp://example.org/hook", "must start with http"),
    ],
)
def test_an_endpoint_the_egress_rules_refuse_is_not_saved(url: str, reason: str) -> None:
    """Loopback, private, link-local and metadata addresses, and other schemes, are refused
    with the reason and what to change; nothing is stored."""
    with pytest.raises(ValidationError) as caught:
        services.webhook_endpoint_create(url=url, events=["import.finished"])
    text = " ".join(caught.value.messages)
    assert reason in text
    if "address" in reason:
        assert "WEBHOOK_ALLOWED_HOSTS" in text
    assert not WebhookEndpoint.objects.exists()


def test_the_address_connected_to_is_checked_again_on_every_request(settings: Any) -> None:
    """An endpoint allowed when saved is refused when its host is no longer allowed: the
    attempt says why and the delivery waits for its next attempt."""
    with webhook_receiver([]) as receiver:
        endpoint = endpoint_for(receiver, settings)
        settings.WEBHOOK_ALLOWED_HOSTS = []
        delivery = services.webhook_test_send(endpoint=endpoint, by=None)
        done = run(delivery)
    assert done.status == JobStatus.QUEUED and done.tries == 1
    (attempt,) = WebhookAttempt.objects.filter(delivery=delivery)
    assert "127.0.0.1" in attempt.error and "WEBHOOK_ALLOWED_HOSTS" in attempt.error
    assert receiver.requests == []


def test_a_500_and_a_timeout_are_retried_and_the_third_is_delivered(settings: Any) -> None:
    """Every request is signed (the receiver verifies each with standardwebhooks) with the
    same webhook-id and a fresh timestamp; the log keeps all three attempts; the waits grow
    exponentially."""
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.5
    settings.WEBHOOK_BACKOFF_SECONDS = 10
    with webhook_receiver([], script={1: "500", 2: "hang"}, hang_seconds=2) as receiver:
        endpoint = endpoint_for(receiver, settings)
        delivery = services.webhook_test_send(endpoint=endpoint, by=None)
        first = run(delivery)
        assert (first.status, first.tries, first.last_status_code) == ("queued", 1, 500)
        assert first.next_attempt_at is not None
        wait = (first.next_attempt_at - timezone.now()).total_seconds()
        assert 8 < wait <= 10
        assert run(delivery).status == "queued"  # not due yet: nothing is sent
        assert len(receiver.requests) == 1
        due(delivery)
        second = run(delivery)
        assert (second.status, second.tries, second.last_status_code) == ("queued", 2, None)
        assert second.next_attempt_at is not None
        assert 18 < (second.next_attempt_at - timezone.now()).total_seconds() <= 20
        due(delivery)
        third = run(delivery)
    assert third.status == JobStatus.SUCCEEDED, third.message
    assert third.tries == 3
    attempts = list(WebhookAttempt.objects.filter(delivery=delivery).order_by("number"))
    assert [a.status_code for a in attempts] == [500, None, 200]
    assert "no answer within 0.5 s" in attempts[1].error
    assert receiver.bad_signatures == 0
    assert {r["headers"]["webhook-id"] for r in receiver.requests} == {delivery.message_id}
    assert receiver.handled == {delivery.message_id: 1}
    assert attempts[2].request_headers["webhook-signature"].startswith("v1,")


def test_a_receiver_down_past_the_retry_window_ends_failed(settings: Any) -> None:
    """Connection refused on every attempt: once the next wait would pass the retry window
    the delivery fails, saying why and that it can be redelivered."""
    settings.WEBHOOK_BACKOFF_SECONDS = 30
    settings.WEBHOOK_RETRY_WINDOW_SECONDS = 100
    with webhook_receiver([]) as receiver:
        endpoint = endpoint_for(receiver, settings)
    # The receiver is down from here on.
    delivery = services.webhook_test_send(endpoint=endpoint, by=None)
    states = []
    for _n in range(5):
        states.append(run(delivery).status)
        due(delivery)
    done = WebhookDelivery.objects.get(pk=delivery.pk)
    assert done.status == JobStatus.FAILED, states
    assert states[:2] == ["queued", "queued"] and done.tries == 3
    assert "Failed after 3 attempts" in done.message and "Redeliver" in done.message
    assert all(a.error for a in WebhookAttempt.objects.filter(delivery=delivery))


def test_redeliver_sends_the_same_message_again(settings: Any) -> None:
    """Redeliver puts an ended delivery back in the queue as the same webhook-id; its log
    keeps the earlier attempts."""
    with webhook_receiver([]) as receiver:
        endpoint = endpoint_for(receiver, settings)
        delivery = run(services.webhook_test_send(endpoint=endpoint, by=None))
        assert delivery.status == "succeeded"
        with pytest.raises(ValidationError):
            services.webhook_redeliver(
                delivery=services.webhook_test_send(endpoint=endpoint, by=None)
            )
        services.webhook_redeliver(delivery=delivery)
        again = run(delivery)
    assert again.status == "succeeded" and again.tries == 1
    assert WebhookAttempt.objects.filter(delivery=delivery).count() == 2
    assert receiver.seen[delivery.message_id] == 2 and receiver.handled[delivery.message_id] == 1


def test_a_rotated_secret_signs_beside_the_old_one_for_a_while(settings: Any) -> None:
    """After a rotation each request carries both signatures, so a receiver still on the
    old secret, and one on the new, both verify it; once the grace ends, only the new."""
    with webhook_receiver([]) as receiver:
        endpoint = endpoint_for(receiver, settings)
        old = receiver.secrets[0]
        new = services.webhook_secret_rotate(endpoint=endpoint)
        assert new != old and new.startswith("whsec_")
        run(services.webhook_test_send(endpoint=endpoint, by=None))
        assert receiver.verified_with(old, 0) and receiver.verified_with(new, 0)
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
            previous_secret_expires_at=timezone.now() - timedelta(seconds=1)
        )
        run(services.webhook_test_send(endpoint=endpoint, by=None))
        assert receiver.verified_with(new, 1) and not receiver.verified_with(old, 1)


def test_events_are_emitted_to_the_endpoints_that_want_them(settings: Any, lead: Any) -> None:
    """A dataset's endpoint gets its events, a site-wide one every dataset's; an endpoint
    gets only the events it chose; a takedown names the samples and the reason."""
    dataset = mmooc_dataset()
    other = mmooc_dataset()
    samples = [mmooc_sample(dataset) for _ in range(2)]
    mmooc_sample(other)
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:9"]
    mine, _s = services.webhook_endpoint_create(
        url="http://127.0.0.1:9/a", events=["samples.taken_down"], dataset=dataset
    )
    everything, _s = services.webhook_endpoint_create(
        url="http://127.0.0.1:9/b", events=["samples.taken_down", "snapshot.built"]
    )
    elsewhere, _s = services.webhook_endpoint_create(
        url="http://127.0.0.1:9/c", events=["samples.taken_down"], dataset=other
    )
    samples_take_down(
        dataset=dataset,
        samples=Sample.objects.filter(pk__in=[s.pk for s in samples]),
        by=lead,
        reason="licence withdrawn",
    )
    got = {d.endpoint_id: d for d in WebhookDelivery.objects.filter(event="samples.taken_down")}
    assert set(got) == {mine.pk, everything.pk}
    data = got[mine.pk].payload["data"]
    assert got[mine.pk].payload["type"] == "samples.taken_down"
    assert (data["count"], data["reason"], data["by"]) == (2, "licence withdrawn", lead.username)
    assert sorted(data["external_ids"]) == sorted(s.external_id for s in samples)
    assert data["dataset"] == {"id": dataset.pk, "name": dataset.name}
    assert elsewhere.pk not in got


def test_samples_verified_and_adjudication_are_found_by_the_sweep(settings: Any) -> None:
    """The sweep sends one samples.verified event per dataset and sweep, with the count and
    ids of the samples verified since the last one; a first sweep only starts watching."""
    dataset = mmooc_dataset()
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:9"]
    services.webhook_endpoint_create(
        url="http://127.0.0.1:9/a",
        events=["samples.verified", "adjudication.needed"],
        dataset=dataset,
    )
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    assert services.webhook_status_events() == 0  # starts watching now
    fresh = [mmooc_sample(dataset, status=SampleStatus.VERIFIED) for _ in range(3)]
    mmooc_sample(dataset, status=SampleStatus.NEEDS_ADJUDICATION)
    assert services.webhook_status_events() == 2
    assert services.webhook_status_events() == 0  # nothing new
    verified = WebhookDelivery.objects.get(event="samples.verified")
    assert verified.payload["data"]["count"] == 3
    assert verified.payload["data"]["external_ids"] == [s.external_id for s in fresh]
    assert WebhookDelivery.objects.filter(event="adjudication.needed").count() == 1


def test_an_import_a_snapshot_and_a_judge_job_emit_their_events(
    settings: Any, tmp_path: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """import.finished (with its counts), snapshot.built (with its file's sha256) and
    judge_job.finished (with its status) are recorded once each for a site-wide endpoint."""
    from annotation.snapshots import services as snapshot_services
    from tests.annotation.imports_support import dataset_for, mmooc_record, run_import, write_lines
    from tests.judging.factories import bulk_responses, bulk_samples, rule_judge, run_job

    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:9"]
    services.webhook_endpoint_create(url="http://127.0.0.1:9/all", events=ALL)
    dataset = dataset_for("mmooc", "mmooc")
    job = run_import(dataset, "mmooc", write_lines(tmp_path / "r.jsonl", [mmooc_record(1)]))
    assert job.status == "succeeded", job.message
    finished = WebhookDelivery.objects.get(event="import.finished")
    assert finished.payload["data"]["import"]["id"] == job.pk
    assert finished.payload["data"]["import"]["imported"] == 1
    Sample.objects.filter(dataset=dataset).update(status=SampleStatus.VERIFIED)
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name="v1", format="jsonl", queue=False
    )
    snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    built = WebhookDelivery.objects.get(event="snapshot.built")
    assert built.payload["data"]["snapshot"]["name"] == "v1"
    assert len(built.payload["data"]["snapshot"]["file"]["sha256"]) == 64
    judged = mmooc_dataset()
    bulk_responses(bulk_samples(judged, 3), ["m"])
    run_job(
        django_capture_on_commit_callbacks, dataset=judged, task="scoring", judges=[rule_judge()]
    )
    ended = WebhookDelivery.objects.get(event="judge_job.finished")
    assert ended.payload["data"]["judge_job"]["status"] == "succeeded"
    assert ended.payload["data"]["judge_job"]["judges"] == ["rule"]


def test_the_pages_show_the_secret_once_and_the_delivery_log(
    settings: Any, lead: Any, annotator: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """A lead adds an endpoint (the secret shows once), sends a test event, sees it in the log
    with its attempts and redelivers it; an annotator may not see the pages."""
    dataset = mmooc_dataset()
    client = Client()
    client.force_login(lead)
    with webhook_receiver([]) as receiver:
        settings.WEBHOOK_ALLOWED_HOSTS = [receiver.host_port]
        url = reverse("annotation:dataset_webhooks", args=[dataset.pk])
        refused = client.post(url, {"url": "http://10.0.0.1/x", "events": ["import.finished"]})
        assert refused.status_code == 400 and "a private address" in refused.content.decode()
        made = client.post(
            url, {"url": receiver.url, "events": ["import.finished"], "enabled": "on"}
        )
        assert made.status_code == 201
        endpoint = WebhookEndpoint.objects.get()
        assert endpoint.secret in made.content.decode()
        receiver.secrets.append(endpoint.secret)
        page = client.get(reverse("annotation:webhook_detail", args=[endpoint.pk]))
        assert endpoint.secret not in page.content.decode()
        with django_capture_on_commit_callbacks(execute=True):
            sent = client.post(reverse("annotation:webhook_test", args=[endpoint.pk]))
        delivery = WebhookDelivery.objects.get()
        assert sent.status_code == 302
        # Eager tasks ran on commit: the test event is delivered.
        delivery.refresh_from_db()
        assert delivery.status == "succeeded", delivery.message
        log = client.get(reverse("annotation:webhook_detail", args=[endpoint.pk])).content.decode()
        assert delivery.message_id in log and "webhook.test" in log
        detail = client.get(
            reverse("annotation:webhook_delivery", args=[delivery.pk])
        ).content.decode()
        assert 'id="redeliver"' in detail and "webhook-signature" in detail
        with django_capture_on_commit_callbacks(execute=True):
            again = client.post(reverse("annotation:webhook_redeliver", args=[delivery.pk]))
        assert again.status_code == 302
    assert receiver.seen[delivery.message_id] == 2
    api = client.get(reverse("api_webhook_delivery", args=[delivery.pk])).json()
    assert api["status"] == "succeeded" and len(api["attempts"]) == 2
    other = Client()
    other.force_login(annotator)
    assert other.get(reverse("annotation:webhook_list")).status_code == 403


def test_the_api_makes_an_endpoint_and_returns_its_secret_once(settings: Any, lead: Any) -> None:
    from rest_framework.test import APIClient

    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:9"]
    api = APIClient()
    api.force_authenticate(lead)
    made = api.post(
        "/api/webhooks/",
        {"url": "http://127.0.0.1:9/x", "events": ["snapshot.built"]},
        format="json",
    )
    assert made.status_code == 201 and made.json()["secret"].startswith("whsec_")
    listed = api.get("/api/webhooks/").json()
    assert "secret" not in listed[0]
    refused = api.post(
        "/api/webhooks/",
        {"url": "http://192.168.1.1/", "events": ["snapshot.built"]},
        format="json",
    )
    assert refused.status_code == 400 and "a private address" in str(refused.json())


def test_the_backoff_doubles_up_to_its_cap() -> None:
    assert [sending.backoff_seconds(n, base=30, cap=200) for n in range(1, 6)] == [
        30,
        60,
        120,
        200,
        200,
    ]


OUTCOMES = {
    "ok": sending.Outcome(200, "ok", "", 1.0),
    "500": sending.Outcome(500, "no", "", 1.0),
    "redirect": sending.Outcome(302, "", "redirect to /elsewhere not followed", 1.0),
    "timeout": sending.Outcome(None, "", "no answer within 1 s", 1.0),
    "refused": sending.Outcome(None, "", "refused: 10.0.0.1 is private", 1.0),
}


@hypothesis.settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture],
)
@hypothesis.given(
    answers=st.lists(st.sampled_from(sorted(OUTCOMES)), min_size=1, max_size=12),
    max_attempts=st.integers(min_value=1, max_value=6),
)
def test_a_delivery_ends_once_on_its_first_2xx_or_its_last_allowed_attempt(
    settings: Any, monkeypatch: pytest.MonkeyPatch, answers: list[str], max_attempts: int
) -> None:
    """Whatever the endpoint answers, after every attempt: the attempts logged equal the
    attempts made, never more than allowed; the delivery succeeds exactly on its first 2xx,
    fails exactly when the attempts run out without one, and is otherwise queued for a later
    attempt; every attempt carries the same webhook-id; a redirect is never a success."""
    settings.WEBHOOK_MAX_ATTEMPTS = max_attempts
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:9"]
    pending = list(answers)
    seen_ids: set[str] = set()

    def fake_send(url: str, *, body: str, headers: Any, allowed: Any, timeout_s: float) -> Any:
        seen_ids.add(headers["webhook-id"])
        return OUTCOMES[pending.pop(0)]

    monkeypatch.setattr(sending, "send", fake_send)
    endpoint, _secret = services.webhook_endpoint_create(
        url="http://127.0.0.1:9/h", events=["import.finished"]
    )
    delivery = services.webhook_test_send(endpoint=endpoint, by=None)
    for made, answer in enumerate(answers, start=1):
        done = run(delivery)
        logged = WebhookAttempt.objects.filter(delivery=delivery).count()
        assert logged == made == done.tries <= max_attempts
        if answer == "ok":
            assert done.status == JobStatus.SUCCEEDED
            break
        if made == max_attempts:
            assert done.status == JobStatus.FAILED
            break
        assert done.status == JobStatus.QUEUED and done.next_attempt_at is not None
        assert done.next_attempt_at > timezone.now()
        due(delivery)
    final = WebhookDelivery.objects.get(pk=delivery.pk)
    assert final.status in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.QUEUED)
    assert (final.status == JobStatus.SUCCEEDED) == ("ok" in answers[:max_attempts])
    if final.status != JobStatus.QUEUED:
        # An ended delivery is never sent again by a repeated message.
        assert run(delivery).tries == final.tries
    assert seen_ids == {delivery.message_id}
