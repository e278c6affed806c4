"""Redis (broker, cache and rate-limit store) killed and started again twenty times while
imports, judge chunks and sweeps are in flight: the worker stays up through every outage
(mmooc_site/redisbroker.py), no API call answers 500 meanwhile (each answers 2xx or 503),
and every job ends correctly within two minutes of Redis's last return, each row and
verdict exactly once.

Redis restarts empty, as a crashed one without persistence does: messages it held are lost
and the sweeps (beat in the worker, every second) send them again after the production
timeouts (JOB_QUEUED_TIMEOUT_SECONDS 60 s)."""

from __future__ import annotations

import time
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from annotation.models import ImportJob, JobStatus, Sample
from judging.models import JudgeJob, Verdict
from tests.annotation.imports_support import b64, dataset_for, image, mmooc_record, write_lines
from tests.conftest import client_for, site_broker, worker_on
from tests.judging.factories import bulk_responses, bulk_samples, fake_judge
from tests.review.factories import review_dataset
from tests.support.processes import RedisServer, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

OUTAGES = 20
DEADLINE = 120  # seconds after Redis's last return
IMPORT_ROWS = 600  # two chunks
ENDED = {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED}


def test_twenty_redis_restarts_during_imports_judge_chunks_and_sweeps(
    transactional_db: None,
    tmp_path: Path,
    settings: Any,
    lead: Any,
    annotator: Any,
    fake_openai: Any,
) -> None:
    sources = tmp_path / "sources"
    picture = b64(image(1))
    source = write_lines(
        sources / "rows.jsonl", [mmooc_record(n, image=picture) for n in range(IMPORT_ROWS)]
    )
    settings.IMPORT_SERVER_ROOTS = [str(sources)]
    reviewed = review_dataset(40, members=[annotator])
    lead_api, annotator_api = client_for(lead), client_for(annotator)
    answers: Counter[int] = Counter()
    imports: list[int] = []
    judge_jobs: dict[int, int] = {}  # job -> responses

    def call(client: Any, method: str, url: str, body: Any = None) -> Any:
        response = getattr(client, method)(url, body, format="json")
        answers[response.status_code] += 1
        assert response.status_code < 500 or response.status_code == 503, response.content
        return response

    with (
        RedisServer(tmp_path / "redis") as redis_server,
        site_broker(redis_server.url),
        fake_openai(latency=0.25, seed=7) as fake,
    ):
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": redis_server.url,
                "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
            }
        }
        judge = fake_judge(fake.base_url, max_concurrency=4, timeout_s=5)
        env = {
            "JOB_SWEEP_SECONDS": "1",
            "REDIS_URL": redis_server.url,
            "IMPORT_SERVER_ROOTS": str(sources),
        }
        with worker_on(redis_server.url, env, beat=True) as worker:
            log_path = _worker_log(worker)
            returned_at = 0.0
            for outage in range(OUTAGES):
                # Something in flight: an import or a judge job (in turn), started through
                # the API, running in the worker when Redis goes.
                if outage % 2 == 0:
                    dataset = dataset_for("mmooc", "mmooc", name=f"import-{outage}")
                    started = call(
                        lead_api,
                        "post",
                        reverse("api_dataset_imports", args=[dataset.pk]),
                        {"format": "mmooc", "source_kind": "server_path", "location": str(source)},
                    )
                    imports.append(started.json()["id"])
                    model: Any = ImportJob
                else:
                    judged = dataset_for("mmooc", "mmooc", name=f"judged-{outage}")
                    responses = bulk_responses(bulk_samples(judged, 40), ["m1"])
                    started = call(
                        lead_api,
                        "post",
                        reverse("api_judge_jobs", args=[judged.pk]),
                        {"task": "scoring", "judges": [judge.name]},
                    )
                    judge_jobs[started.json()["id"]] = len(responses)
                    model = JudgeJob
                job_id = started.json()["id"]
                wait_until(
                    partial(_started, model, job_id),
                    timeout=90,
                    what=f"job {job_id} to start",
                )
                lost = log_path.read_text().count("Connection to broker lost")
                redis_server.kill()
                # While it is down: the API answers, and a start is recorded, waiting.
                call(annotator_api, "get", reverse("api_me"))
                call(annotator_api, "post", reverse("api_review_claim", args=[reviewed.pk]))
                waiting = dataset_for("mmooc", "mmooc", name=f"waiting-{outage}")
                waiting_responses = bulk_responses(bulk_samples(waiting, 10), ["m1"])
                waited = call(
                    lead_api,
                    "post",
                    reverse("api_judge_jobs", args=[waiting.pk]),
                    {"task": "scoring", "judges": [judge.name]},
                )
                judge_jobs[waited.json()["id"]] = len(waiting_responses)
                wait_until(
                    partial(_more, log_path, "Connection to broker lost", lost),
                    timeout=60,
                    what="the worker to see Redis go",
                )
                connected = log_path.read_text().count("Connected to redis://")
                redis_server.start()
                returned_at = time.monotonic()
                assert worker.poll() is None, log_path.read_text()[-3000:]
                wait_until(
                    partial(_more, log_path, "Connected to redis://", connected),
                    timeout=60,
                    what=f"the worker to reconnect after outage {outage + 1}",
                )
                assert worker.poll() is None, log_path.read_text()[-3000:]

            def all_ended() -> bool:
                return all(
                    s in ENDED
                    for s in [
                        *ImportJob.objects.filter(pk__in=imports).values_list("status", flat=True),
                        *JudgeJob.objects.filter(pk__in=judge_jobs).values_list(
                            "status", flat=True
                        ),
                    ]
                )

            wait_until(all_ended, timeout=DEADLINE, what="every job to end after Redis's return")
            ended_after = time.monotonic() - returned_at
            assert worker.poll() is None
            log = log_path.read_text()
            assert "Unrecoverable error" not in log
            assert log.count("Connection to broker lost") >= OUTAGES

    for job in ImportJob.objects.filter(pk__in=imports):
        assert job.status == JobStatus.SUCCEEDED, job.message
        assert (job.rows_done, job.imported, job.rejected) == (IMPORT_ROWS, IMPORT_ROWS, 0)
        assert Sample.objects.filter(dataset=job.dataset).count() == IMPORT_ROWS
    for judge_job in JudgeJob.objects.filter(pk__in=judge_jobs):
        assert judge_job.status == JobStatus.SUCCEEDED, judge_job.message
        verdicts = Verdict.objects.filter(job=judge_job)
        assert verdicts.count() == verdicts.values("response").distinct().count()
        assert verdicts.count() == judge_jobs[judge_job.pk]
        assert not verdicts.exclude(error_kind="").exists()
    assert set(answers) <= {200, 201, 202, 204, 503}, answers
    print(
        f"\nredis restarts: {OUTAGES}, answers {dict(answers)}, jobs ended {ended_after:.0f} s "
        "after Redis's last return"
    )


def _started(model: Any, pk: int) -> bool:
    return bool(model.objects.get(pk=pk).status != JobStatus.QUEUED)


def _more(log: Path, line: str, than: int) -> bool:
    """Whether the log holds the line more than ``than`` times."""
    return log.read_text().count(line) > than


def _worker_log(worker: Any) -> Path:
    """The log file the celery_worker helper gives the process (its stdout)."""
    import os

    return Path(os.readlink(f"/proc/{worker.pid}/fd/1"))
