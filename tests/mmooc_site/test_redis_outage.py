"""While Redis (the broker and the cache) is away, no API call answers 500: the signed-in
calls are answered with the rate limit let through, each start of a job is recorded and says
that it waits for the task queue, /healthz/ names what is down; once Redis is back, the sweeps
send every waiting job."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import tasks as annotation_tasks
from annotation.models import ImportJob, JobStatus, SampleBulkJob, Snapshot
from annotation.services import bulk_jobs
from core import throttling
from core.jobs import NEVER_SENT, broker_down_message, broker_queue_size
from judging import tasks as judging_tasks
from judging.models import JudgeJob
from tests.annotation.imports_support import dataset_for
from tests.conftest import client_for, site_broker
from tests.judging.factories import bulk_responses, bulk_samples, rule_judge
from tests.review.factories import review_dataset
from tests.support.processes import RedisServer

pytestmark = [pytest.mark.redis, pytest.mark.postgres]


@pytest.fixture
def redis_server(tmp_path: Path, settings: Any) -> Iterator[RedisServer]:
    """A Redis of this test's own as the site's broker and cache, tasks sent to it (not run
    eagerly), and the rate limit's failure count reset."""
    from mmooc_site.celery import app

    with RedisServer(tmp_path / "redis") as server, site_broker(server.url):
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": server.url,
                "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
            }
        }
        app.conf.task_always_eager = False
        try:
            yield server
        finally:
            app.conf.task_always_eager = True


def test_every_signed_in_call_and_job_start_answers_while_redis_is_down(
    redis_server: RedisServer,
    lead: Any,
    annotator: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """GET /api/me/, a claim, and the start of an import, a snapshot, a judge job and a bulk
    action, with Redis killed: none answers 500; each job is recorded, queued, marked never
    sent and says it waits for the task queue; /healthz/ answers 503 naming the broker and the
    cache. With Redis back, one round of the sweeps sends all four."""
    monkeypatch.setattr(throttling, "FAILED_OPEN", throttling._FailedOpen())
    monkeypatch.setattr(bulk_jobs, "INLINE_MAX", 5)
    reviewed = review_dataset(3, members=[annotator])
    imported = dataset_for("mmooc", "mmooc", name="imported")
    judged = dataset_for("mmooc", "mmooc", name="judged")
    bulk_responses(bulk_samples(judged, 8), ["m1"])
    rule_judge()
    lead_api, annotator_api = client_for(lead), client_for(annotator)
    redis_server.kill()

    me = annotator_api.get(reverse("api_me"))
    assert me.status_code == 200, me.content
    claim = annotator_api.post(reverse("api_review_claim", args=[reviewed.pk]))
    assert claim.status_code == 200, claim.content
    with django_capture_on_commit_callbacks(execute=True):
        upload = SimpleUploadedFile("rows.jsonl", b"{}\n")
        started: dict[Any, Any] = {
            ImportJob: lead_api.post(
                reverse("api_dataset_imports", args=[imported.pk]),
                {"format": "mmooc", "source_kind": "upload", "file": upload},
                format="multipart",
            ),
            Snapshot: lead_api.post(
                reverse("api_dataset_snapshots", args=[judged.pk]),
                {"name": "v1", "format": "jsonl"},
                format="json",
            ),
            JudgeJob: lead_api.post(
                reverse("api_judge_jobs", args=[judged.pk]),
                {"task": "scoring", "judges": ["rule"]},
                format="json",
            ),
            SampleBulkJob: lead_api.post(
                reverse("api_dataset_samples_bulk", args=[judged.pk]),
                {"action": "set_priority", "priority": 3},
                format="json",
            ),
        }
    codes = {model.__name__: response.status_code for model, response in started.items()}
    assert codes == {"ImportJob": 202, "Snapshot": 202, "JudgeJob": 202, "SampleBulkJob": 202}
    jobs: dict[Any, Any] = {m: m.objects.get(pk=r.json()["id"]) for m, r in started.items()}
    for model, job in jobs.items():
        assert job.status == JobStatus.QUEUED, model
        assert job.message == broker_down_message(), model
        assert job.queued_at == NEVER_SENT, model
    assert throttling.failed_open() == 6

    health = lead_api.get("/healthz/")
    assert health.status_code == 503
    assert health.json()["down"] == ["broker", "cache"]

    redis_server.start()
    assert lead_api.get("/healthz/").status_code == 200
    assert broker_queue_size() == 0
    annotation_tasks.sweep_jobs()
    judging_tasks.sweep_jobs()
    assert broker_queue_size() == 4
    for model, job in jobs.items():
        job.refresh_from_db()
        assert job.status == JobStatus.QUEUED and job.queued_at != NEVER_SENT, model


def test_every_page_answers_while_redis_is_down(
    redis_server: RedisServer,
    lead: Any,
    annotator: Any,
    auditor: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every URL of the URL conf (the pages added since the API's outage test included: saved
    views, assignments, the audit's next item, the leaderboard's freshness), opened by a lead
    and by a member annotator and auditor with Redis killed: none answers 500."""
    from tests.mmooc_site.test_access import _urls

    monkeypatch.setattr(throttling, "FAILED_OPEN", throttling._FailedOpen())
    dataset = review_dataset(3, members=[annotator, auditor])
    sample = dataset.samples.order_by("pk").first()
    assert sample is not None
    ids = {
        "dataset_id": dataset.pk,
        "sample_id": sample.pk,
        "asset_id": sample.media_links.get().asset_id,
        "object_id": 1,
    }
    clients = {}
    for user in (lead, annotator, auditor):
        clients[user] = client_for(user)
        clients[user].force_login(user)  # the pages' session, made while Redis is there
    redis_server.kill()
    for user, client in clients.items():
        codes = {url: client.get(url).status_code for url in _urls(ids)}
        errors = [url for url, code in codes.items() if code >= 500]
        assert errors == [], (user.username, errors)
