"""Every kind of job ends after a crash: real worker processes are SIGKILLed mid-job and a
Redis broker is killed and restarted mid-job; the jobs are resumed by the sweep (Celery beat
in the worker) and finish with every item exactly once.

To stop a job mid-way deterministically, a second database connection holds an exclusive lock
on the table the job writes next, so the worker is stuck inside the job (claimed, beating)
when it is killed. The sweep runs every second here; heartbeats, the stale threshold and the
lost-message timeout keep their defaults, so the 120 s deadlines are those of production.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.urls import reverse

from annotation.imports import services as import_services
from annotation.imports.pipeline import CHUNK_ROWS
from annotation.models import (
    ImportJob,
    ImportRowError,
    JobStatus,
    Sample,
    SampleBulkJob,
    SampleRevision,
    SampleStatus,
    Snapshot,
)
from annotation.sample_filters import SampleFilter
from annotation.services.bulk_jobs import sample_bulk_job_create
from annotation.snapshots import services as snapshot_services
from core.jobs import broker_down_message
from judging import services as judging_services
from judging.audit import computations
from judging.audit import services as audit_services
from judging.models import (
    AuditComputation,
    AuditItem,
    AuditSet,
    JudgeJob,
    JudgeJobChunk,
    ModelResponse,
    Verdict,
)
from review.models import ReviewerQualityComputation
from review.quality import computations as quality_computations
from review.quality.computations import reviewer_quality_request
from tests.annotation.factories import UserFactory, mmooc_dataset
from tests.annotation.imports_support import (
    b64,
    dataset_for,
    image,
    mmooc_record,
    write_lines,
)
from tests.conftest import client_for, site_broker, worker_on
from tests.judging.audit_factories import add_member, draw, rate_all, scoring_dataset
from tests.judging.factories import bulk_responses, bulk_samples, fake_judge, rule_judge
from tests.review.factories import review_dataset, submit
from tests.support.processes import RedisServer, kill_worker, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

SWEEP_EVERY_SECOND = {"JOB_SWEEP_SECONDS": "1"}
DEADLINE = 120  # seconds: a job must end this soon after a crash, with default settings


@contextmanager
def tables_locked(*tables: str, mode: str = "EXCLUSIVE") -> Iterator[None]:
    """Hold a lock on the tables from another connection: EXCLUSIVE lets reads pass and makes
    writes wait; ACCESS EXCLUSIVE makes reads wait too."""
    db = connection.settings_dict
    with psycopg.connect(
        host=db["HOST"],
        port=db["PORT"],
        user=db["USER"],
        password=db["PASSWORD"] or None,
        dbname=db["NAME"],
    ) as locker:
        locker.execute(f"LOCK TABLE {', '.join(tables)} IN {mode} MODE")
        try:
            yield
        finally:
            locker.rollback()


def waiting_on(table: str) -> bool:
    """Whether some session waits for a lock on the table (a worker stuck inside its job)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE relation = %s::regclass AND NOT granted", [table]
        )
        return bool(cursor.fetchone()[0])


def status_of(model: type[Any], pk: int) -> str:
    return str(model.objects.values_list("status", flat=True).get(pk=pk))


def ended(*rows: tuple[type[Any], int]) -> Callable[[], bool]:
    finished = {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED}
    return lambda: all(status_of(model, pk) in finished for model, pk in rows)


def one_verdict_per_response(job: JudgeJob, responses: list[ModelResponse]) -> None:
    per_response = Counter(
        Verdict.objects.filter(task=job.task, response__in=responses).values_list(
            "response_id", flat=True
        )
    )
    assert set(per_response) == {r.pk for r in responses}, "a response has no verdict"
    assert set(per_response.values()) == {1}, "a response has two verdicts"


def test_every_kind_of_job_finishes_after_its_worker_is_killed(
    transactional_db: None, tmp_path: Path
) -> None:
    """An import (after its first chunk), a snapshot, an audit draw and a judge job chunk are
    all stuck inside a worker that is SIGKILLed; a new worker's sweep takes them over within
    two minutes and each finishes with every item exactly once."""
    rows = CHUNK_ROWS * 6
    picture = b64(image(1))
    source = write_lines(
        tmp_path / "rows.jsonl", [mmooc_record(n, image=picture) for n in range(rows)]
    )
    import_dataset = dataset_for("mmooc", "mmooc")
    judged = mmooc_dataset(name="judged")
    responses = bulk_responses(bulk_samples(judged, 500), ["m1", "m2"])  # two rule chunks
    audited, _judges = scoring_dataset(n_samples=40)
    broker = os.environ["REDIS_URL"]

    with (
        tables_locked("annotation_snapshotentry", "judging_audititem", "judging_verdict"),
        worker_on(broker, SWEEP_EVERY_SECOND, beat=True, concurrency=4) as worker,
    ):
        imported = import_services.import_job_create(
            dataset=import_dataset,
            format="mmooc",
            source_kind="server_path",
            source=str(source),
            trusted=True,
        )
        snapshot = snapshot_services.snapshot_create(
            dataset=judged, name="v1", format="jsonl", filter={"statuses": ["pending_review"]}
        )
        audit_set = audit_services.audit_set_create(
            dataset=audited, name="audit", task="scoring", size=20, seed=3
        )
        job = judging_services.judge_job_start(
            dataset=judged, task="scoring", judges=[rule_judge()]
        )
        wait_until(
            lambda: ImportJob.objects.get(pk=imported.pk).rows_done >= CHUNK_ROWS,
            timeout=60,
            what="the import's first chunk",
        )
        with tables_locked("annotation_sample"):
            for table in (
                "annotation_sample",
                "annotation_snapshotentry",
                "judging_audititem",
                "judging_verdict",
            ):
                wait_until(partial(waiting_on, table), timeout=60, what=f"a wait on {table}")
            for model, pk in (
                (ImportJob, imported.pk),
                (Snapshot, snapshot.pk),
                (AuditSet, audit_set.pk),
                (JudgeJob, job.pk),
            ):
                assert status_of(model, pk) == JobStatus.RUNNING, model
            rows_before = ImportJob.objects.get(pk=imported.pk).rows_done
            assert CHUNK_ROWS <= rows_before < rows
            kill_worker(worker)

    with worker_on(broker, SWEEP_EVERY_SECOND, beat=True, concurrency=2):
        wait_until(
            ended(
                (ImportJob, imported.pk),
                (Snapshot, snapshot.pk),
                (AuditSet, audit_set.pk),
                (JudgeJob, job.pk),
            ),
            timeout=DEADLINE,
            what="every job to end after the kill",
        )

    imported.refresh_from_db()
    assert imported.status == JobStatus.SUCCEEDED, imported.message
    assert (imported.rows_done, imported.imported, imported.rejected) == (rows, rows, 0)
    assert imported.attempts == 2
    assert Sample.objects.filter(dataset=import_dataset).count() == rows
    assert not ImportRowError.objects.filter(job=imported).exists()

    snapshot.refresh_from_db()
    assert snapshot.status == JobStatus.SUCCEEDED, snapshot.message
    assert (snapshot.done, snapshot.entries.count(), snapshot.attempts) == (500, 500, 2)

    audit_set.refresh_from_db()
    assert audit_set.status == JobStatus.SUCCEEDED, audit_set.message
    assert audit_set.attempts == 2
    items = AuditItem.objects.filter(audit_set=audit_set)
    assert items.count() == audit_set.size
    assert items.values("position").distinct().count() == audit_set.size

    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.message
    one_verdict_per_response(job, responses)
    assert max(JudgeJobChunk.objects.filter(job=job).values_list("attempts", flat=True)) == 2


def test_bulk_jobs_and_stored_figures_finish_after_their_worker_is_killed(
    transactional_db: None, lead: Any
) -> None:
    """A bulk take-down (stuck writing the samples' history), an audit's figures (stuck
    reading the ratings) and a dataset's reviewer figures (stuck reading the reviews) are
    claimed and running in a worker that is SIGKILLed; a new worker's sweep takes all three
    over within two minutes: every sample taken down once, with one history entry each, and
    both sets of figures stored."""
    bulk_dataset = mmooc_dataset(name="bulk")
    bulk_samples(bulk_dataset, 300)
    audited, _judges = scoring_dataset(n_samples=30)
    auditor = UserFactory.create(role="auditor")
    add_member(audited, auditor)
    audit_set = draw(audited, size=8, double_rating_fraction=0)
    rate_all(audit_set, [auditor])
    reviewers = [UserFactory.create(role="annotator") for _ in range(2)]
    reviewed = review_dataset(3, k=2, members=reviewers)
    for sample in Sample.objects.filter(dataset=reviewed).order_by("pk")[:2]:
        for reviewer in reviewers:
            submit(reviewer, sample)
    broker = os.environ["REDIS_URL"]
    # Queued now (reading the reviews), sent once a worker runs, which waits on them.
    figures = reviewer_quality_request(dataset=reviewed, send=False)

    with (
        tables_locked("annotation_samplerevision"),
        tables_locked("judging_auditrating", "review_review", mode="ACCESS EXCLUSIVE"),
        worker_on(broker, SWEEP_EVERY_SECOND, beat=True, concurrency=3) as worker,
    ):
        bulk = sample_bulk_job_create(
            dataset=bulk_dataset,
            action="take_down",
            filter=SampleFilter(),
            ids=None,
            selected=300,
            by=lead,
            reason="recovery test",
        )
        computations.audit_statistics_request(audit_set=audit_set)
        computation = AuditComputation.objects.get(audit_set=audit_set)
        quality_computations.computation_send(figures)
        for table in ("annotation_samplerevision", "judging_auditrating", "review_review"):
            wait_until(partial(waiting_on, table), timeout=60, what=f"a wait on {table}")
        assert status_of(SampleBulkJob, bulk.pk) == JobStatus.RUNNING
        assert status_of(AuditComputation, computation.pk) == JobStatus.RUNNING
        wait_until(
            lambda: status_of(ReviewerQualityComputation, figures) == JobStatus.RUNNING,
            timeout=60,
            what="the reviewer figures' run",
        )
        kill_worker(worker)

    with worker_on(broker, SWEEP_EVERY_SECOND, beat=True, concurrency=3):
        wait_until(
            ended(
                (SampleBulkJob, bulk.pk),
                (AuditComputation, computation.pk),
                (ReviewerQualityComputation, figures),
            ),
            timeout=DEADLINE,
            what="the bulk job and the computations to end after the kill",
        )

    bulk.refresh_from_db()
    assert bulk.status == JobStatus.SUCCEEDED, bulk.message
    assert bulk.attempts == 2 and bulk.changed == 300
    taken_down = Sample.objects.filter(dataset=bulk_dataset, status=SampleStatus.REMOVED)
    assert taken_down.count() == 300
    history = SampleRevision.objects.filter(sample__dataset=bulk_dataset)
    assert history.filter(after__status=SampleStatus.REMOVED).count() == 300
    computation.refresh_from_db()
    assert computation.status == JobStatus.SUCCEEDED, computation.message
    assert computation.attempts == 2
    assert computation.result is not None and computation.result["n_rated"] == 8
    stored = ReviewerQualityComputation.objects.get(pk=figures)
    assert stored.status == JobStatus.SUCCEEDED, stored.message
    assert stored.attempts == 2
    assert stored.result is not None
    assert sorted(row["reviews"] for row in stored.result["rows"]) == [2, 2]


def test_a_judge_job_survives_a_redis_restart_and_jobs_wait_for_the_broker(
    transactional_db: None, tmp_path: Path, lead: Any, fake_openai: Any
) -> None:
    """Redis (broker and rate-limit store) is killed mid-job. While it is down, /healthz/
    answers 503 naming the broker, a new job is accepted (202) and says it waits for the
    broker, and a cancelled job ends cancelled at once. Redis restarts empty: the running job
    and the waiting one finish, with exactly one verdict per item and no error verdict."""
    running_set = mmooc_dataset(name="running")
    responses = bulk_responses(bulk_samples(running_set, 120), ["m1", "m2", "m3"])
    waiting_set = mmooc_dataset(name="waiting")
    waiting_responses = bulk_responses(bulk_samples(waiting_set, 30), ["m1"])
    cancelled_set = mmooc_dataset(name="cancelled")
    bulk_responses(bulk_samples(cancelled_set, 120), ["m1", "m2", "m3"])
    rule_judge()  # made by a migration, gone after another test's flush
    client = client_for(lead)

    with (
        RedisServer(tmp_path / "redis") as redis_server,
        site_broker(redis_server.url),
        # Calls of a second each: the running job's last chunk is still at work when the
        # second job's planning (queued behind all its chunks) has run and Redis is killed.
        fake_openai(latency=1.0, seed=5) as fake,
    ):
        judge = fake_judge(fake.base_url, max_concurrency=8, timeout_s=5)
        # Three lanes of 120 items on two worker processes: the second job's planning runs
        # when the first two lanes end, while the third is still at work.
        env = {**SWEEP_EVERY_SECOND, "REDIS_URL": redis_server.url, "JUDGE_LANE_ITEMS": "120"}
        with worker_on(redis_server.url, env, beat=True):
            job = judging_services.judge_job_start(
                dataset=running_set, task="scoring", judges=[judge]
            )
            wait_until(
                lambda: Verdict.objects.filter(job=job).count() >= 60,
                timeout=60,
                what="the first chunks' verdicts",
            )
            # Planned now, its chunks queue behind the running job's: still running at the kill.
            doomed = judging_services.judge_job_start(
                dataset=cancelled_set, task="scoring", judges=[judge]
            )
            wait_until(
                lambda: status_of(JudgeJob, doomed.pk) == JobStatus.RUNNING,
                timeout=60,
                what="the second job's planning",
            )
            redis_server.kill()

            health = client.get("/healthz/")
            assert health.status_code == 503
            assert health.json()["down"] == ["broker"]

            started = time.monotonic()
            response = client.post(
                reverse("api_judge_jobs", args=[waiting_set.pk]),
                {"task": "scoring", "judges": ["rule"]},
                format="json",
            )
            assert response.status_code == 202, response.content
            assert time.monotonic() - started < 15, "starting a job waited long on the broker"
            waiting = JudgeJob.objects.get(pk=response.json()["id"])
            assert waiting.status == JobStatus.QUEUED
            assert waiting.message == broker_down_message()

            assert status_of(JudgeJob, doomed.pk) == JobStatus.RUNNING
            cancel = client.post(reverse("api_judge_job_cancel", args=[doomed.pk]))
            assert cancel.status_code == 200
            assert status_of(JudgeJob, doomed.pk) == JobStatus.CANCELLED

            assert status_of(JudgeJob, job.pk) == JobStatus.RUNNING
            redis_server.start()
            wait_until(
                ended((JudgeJob, job.pk), (JudgeJob, waiting.pk)),
                timeout=DEADLINE,
                what="the jobs to end after Redis came back",
            )
            assert client.get("/healthz/").status_code == 200

    job.refresh_from_db()
    waiting.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert waiting.status == JobStatus.SUCCEEDED, waiting.message
    one_verdict_per_response(job, responses)
    one_verdict_per_response(waiting, waiting_responses)
    assert not Verdict.objects.filter(job=job).exclude(error_kind="").exists()
    assert status_of(JudgeJob, doomed.pk) == JobStatus.CANCELLED
