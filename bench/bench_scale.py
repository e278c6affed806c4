"""Benchmark: one dataset at 41,883, 250,000 and 1,000,000 samples, and what each page, API
call and job costs at each size.

For each size, a child process works on a PostgreSQL database of that size's own
(``<--db-prefix>_<size>``, ``bench_scale_41883`` and so on, on the server of DATABASE_URL,
default the local one; made afresh from one migrated template, or kept with ``--reuse``)
and builds, unless ``--reuse`` finds it built:

- the samples through the real import path (a JSON-lines file of MMOOC rows, each with its own
  small PNG, as bench_import.py writes them; imported by ``import_job_run`` as a worker runs
  it; its rows per second are a figure);
- 3 models' responses to every sample and 3 judges' scoring verdicts on every response
  (``INSERT … SELECT`` in the server, as bench_audit_preview.py does), every sample sent to
  review (k = 2 slots each, by the bulk action's service), one review on a tenth of the samples
  (slots and reviews written by SQL; one reviewer, the "veteran", has 10,000 of them, or all
  of them in a dataset too small for that: 10,000 from ``--sizes 100000`` up; for the claim
  alone against the reviewer's history, bench_claim_scale.py), and a 2,000-item scoring audit.

Then it measures, through the Django test client in the child (session of a lead, an
annotator and an auditor; p50 and p95 over ``--gets`` requests, and each one's SQL query
count): the sample list unfiltered, with each filter, with a search, with each sort and on its
last page; the API's sample list, first and deep; the dataset page; progress; reviewers;
leaderboard; the judge job page; the audit planner's preview; the audit's statistics; the
auditor's audit page. A claim + submit loop over the API (``--loops`` loops) by a new reviewer
and by the veteran. Each job then runs in a process of its own, whose peak RSS is its own: a
judge job's planning (rule judge), an import of ``--import-rows`` more rows, a re-import of the
same file unchanged, and a snapshot build in JSONL and in Parquet. The page process's own peak
RSS is reported as ``web_peak_rss_mb``. Media and the generated files stay in ``--var``
(``var/bench-scale/<size>``), so that ``--reuse`` finds the media of its database.

Before the pages, the leaderboard's kept aggregates are recomputed once as a worker does
(``leaderboard_recompute_s``: the one statement of ``judging.leaderboard_statements``).

``--only leaderboard`` measures the leaderboard alone, on a dataset of its own
(``<--db-prefix>_lb_<size>``) built in seconds at any size: a few samples imported, copied by
SQL to the size over MMOOC's groups, categories, formats and scenarios (1 % rejected, 0.5 %
taken down), then the same responses and verdicts as above. Figures: the recomputation (twice),
the page and the API (p50/p95 over ``--gets``, with their query counts) and, with
``--direct``, the leaderboard computed over every verdict in the request as the site did
before it kept aggregates (tests/judging/leaderboard_reference.py; once: 30 s and more).

``--only sample_list`` measures the sample list alone, on a dataset of its own
(``<--db-prefix>_sl_<size>``) built the same way in seconds (varied priorities and last
changes, one image linked to every sample, then ``VACUUM ANALYZE``): the page as a lead sees
it, unfiltered, with each sort it offers (both directions), on its first, a middle and its last
page (the middle one reached by a cursor, as its links carry one; also by ``?page=N``, the old
way, as ``sample_list_middle_by_number``), and the API's list: its first page, a deep page by
the cursor of its ``next`` links, and by ``offset`` (p50/p95 over ``--gets``, with their query
counts).
``--only jobs`` measures the jobs alone, on a dataset of its own (``<--db-prefix>_jobs_<size>``)
built in minutes at any size: ``--seed-rows`` rows (1,000) imported through the real path,
copied by SQL to the size (each copy with its own external id, question and content hash, the
media links and first revision of its original), nine in ten sent to review with k = 2 open
slots each (by SQL), a tenth verified. Figures, each job in a process of its own with its peak
RSS: the import of ``--import-rows`` more rows, their unchanged re-import, the snapshot builds
(JSONL, Parquet) and, with ``--full-sync``, one review queue sync over the whole dataset (what
the end of every import ran before issue 30).

Every snapshot build, in either mode, exports every sample of the dataset (every status but
taken down) and checks that it did; besides its wall time it reports its samples per second and
the CPU seconds of its process (``cpu_s``) and of its PostgreSQL backend (``backend_cpu_s``),
which the queue for a loaded machine's cores does not inflate.

The parent prints one JSON object on its last line: the figures at each size and, for each
figure, its ratio at the largest size to the smallest (``ratios``).

Run: .venv/bin/python bench/bench_scale.py [--sizes 41883,250000,1000000] [--reuse]
     [--gets 10] [--loops 200] [--import-rows 10000] [--no-snapshots] [--db-prefix bench_scale]
     [--var var/bench-scale] [--only leaderboard [--direct] | --only sample_list]
     [--only jobs [--seed-rows 1000] [--full-sync]]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432"
DATASET = "bench-scale"
MODELS = ("model-a", "model-b", "model-c")
VETERAN_REVIEWS = 10_000


def server_url() -> str:
    return os.environ.get("DATABASE_URL", DEFAULT_SERVER + "/postgres").rpartition("/")[0]


def database_url(prefix: str, size: int | str) -> str:
    return f"{server_url()}/{prefix}_{size}"


def make_databases(prefix: str, sizes: list[int]) -> None:
    """A migrated template, then each size's database made afresh from it (one migration)."""
    import psycopg

    from bench.support import make_database

    template = f"{prefix}_template"
    make_database(f"{server_url()}/postgres", template)
    migrated = subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=ROOT,
        env={
            **os.environ,
            "DATABASE_URL": database_url(prefix, "template"),
            "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
            "SECRET_KEY": os.environ.get("SECRET_KEY") or "bench-only-secret-key-" + "x" * 32,
        },
        capture_output=True,
        text=True,
        check=False,
    )
    if migrated.returncode != 0:
        raise SystemExit(f"migrate failed:\n{migrated.stderr[-3000:]}")
    with psycopg.connect(f"{server_url()}/postgres", autocommit=True) as conn:
        for size in sizes:
            name = f"{prefix}_{size}"
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        conn.execute(f'DROP DATABASE "{template}"')


def production_environ(workdir: Path) -> None:
    """The production settings as a bench's child runs them: files under ``workdir``, no
    worker (an in-memory broker), test-client hosts, no HTTPS redirect."""
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + "x" * 32)
    os.environ["VAR_DIR"] = str(workdir / "var")
    os.environ["MEDIA_ROOT"] = str(workdir / "media")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost")
    os.environ["SECURE_SSL_REDIRECT"] = "0"
    os.environ["CELERY_BROKER_URL"] = "memory://"
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"
    os.environ["DJANGO_SETTINGS_MODULE"] = "mmooc_site.settings.production"


def setup_django(prefix: str, size: int, workdir: Path) -> None:
    os.environ["DATABASE_URL"] = database_url(prefix, size)
    production_environ(workdir)
    os.environ["API_THROTTLE_USER"] = "1000000/minute"
    from bench.support import ensure_database

    ensure_database(os.environ["DATABASE_URL"])  # --reuse of a size not built before
    import django

    django.setup()


def write_rows(path: Path, first: int, rows: int) -> Path:
    """MMOOC rows with their own small PNGs, as the import bench writes them."""
    from bench.bench_import import write_file

    write_file(path, rows, first)
    return path


def import_file(dataset: Any, path: Path) -> dict[str, Any]:
    from annotation.imports import services as import_services
    from tests.annotation.imports_support import import_job_of

    job = import_job_of(dataset, "mmooc", path)
    started = time.perf_counter()
    finished = import_services.import_job_run(job_id=job.pk)
    seconds = time.perf_counter() - started
    assert finished is not None and finished.status == "succeeded", finished and finished.message
    return {
        "rows": finished.total_rows,
        "imported": finished.imported,
        "updated": finished.updated,
        "unchanged": finished.unchanged,
        "seconds": round(seconds, 2),
        "rows_per_s": round((finished.total_rows or 0) / seconds, 1),
    }


# --- building -------------------------------------------------------------------------------


def built(size: int) -> Any:
    from annotation.models import Dataset, Sample

    dataset = Dataset.objects.filter(name=DATASET).first()
    if dataset is None or Sample.objects.filter(dataset=dataset).count() != size:
        return None
    return dataset


def build(size: int, workdir: Path) -> tuple[Any, dict[str, Any]]:
    from django.core.management import call_command

    from annotation.imports import services as import_services

    call_command("migrate", verbosity=0)  # a no-op on the template's copy
    call_command("createcachetable", verbosity=0)
    out: dict[str, Any] = {}
    started = time.perf_counter()
    from annotation.models import Dataset

    Dataset.objects.filter(name=DATASET).delete()
    dataset = import_services.import_dataset_get_or_create(
        name=DATASET, format="mmooc", preset="mmooc"
    )
    out["import"] = import_file(dataset, write_rows(workdir / "build.jsonl", 0, size))
    people = make_people(dataset)
    out |= seed_judging(dataset)
    out |= seed_review(dataset, people)
    out |= seed_audit(dataset)
    out["build_s"] = round(time.perf_counter() - started, 1)
    return dataset, out


def make_people(dataset: Any) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    from annotation import services
    from core import roles
    from tests.annotation.factories import UserFactory

    user_model = get_user_model()
    user_model.objects.filter(username__startswith="scale-").delete()
    people = {
        "lead": UserFactory.create(username="scale-lead", role=roles.LEAD),
        "auditor": UserFactory.create(username="scale-auditor", role=roles.AUDITOR),
        "veteran": UserFactory.create(username="scale-veteran", role=roles.ANNOTATOR),
        "newcomer": UserFactory.create(username="scale-newcomer", role=roles.ANNOTATOR),
    }
    for n in range(8):
        people[f"annotator-{n}"] = UserFactory.create(
            username=f"scale-annotator-{n}", role=roles.ANNOTATOR
        )
    for name, user in people.items():
        if name == "auditor":
            services.dataset_add_member(dataset=dataset, user=user, roles={roles.AUDITOR})
        elif name != "lead":
            services.dataset_add_member(dataset=dataset, user=user, roles={roles.ANNOTATOR})
    return people


def seed_judging(dataset: Any) -> dict[str, Any]:
    from django.db import connection

    from judging.models import Judge

    started = time.perf_counter()
    judges = [
        Judge.objects.get_or_create(name=f"scale-judge-{j}", defaults={"kind": "external"})[0].pk
        for j in range(3)
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO judging_modelresponse
                (dataset_id, sample_id, model_name, response, extra, created_at, updated_at)
            SELECT s.dataset_id, s.id, m,
                   CASE WHEN random() < 0.08 THEN 'I cannot answer this question.'
                        ELSE 'The answer is D: the sign cannot be read.' END,
                   '{}'::jsonb, now(), now()
            FROM annotation_sample s CROSS JOIN unnest(%s::text[]) AS m
            WHERE s.dataset_id = %s
            """,
            [list(MODELS), dataset.pk],
        )
        cursor.execute(
            """
            INSERT INTO judging_verdict
                (judge_id, task, prompt_version, repeat, sample_id, response_id, source, label,
                 category, answer_score, reasoning_score, rationale, attempts, error_kind,
                 error, created_at)
            SELECT j, 'mmooc_scoring', 'v1', 0, r.sample_id, r.id, 'import', '', '',
                   (random() < 0.7)::int, floor(random() * 5) / 4.0, '', 1, '', '', now()
            FROM judging_modelresponse r CROSS JOIN unnest(%s::bigint[]) AS j
            WHERE r.dataset_id = %s
            """,
            [judges, dataset.pk],
        )
        cursor.execute("ANALYZE judging_modelresponse")
        cursor.execute("ANALYZE judging_verdict")
    return {"seed_judging_s": round(time.perf_counter() - started, 1)}


def seed_review(dataset: Any, people: dict[str, Any]) -> dict[str, Any]:
    """Every sample to review (k = 2), then one review on a tenth: slot and review rows by SQL,
    the veteran's first, the rest spread over eight annotators."""
    from django.db import connection

    from annotation.models import Sample
    from annotation.services.bulk import samples_send_to_review

    started = time.perf_counter()
    samples_send_to_review(dataset=dataset, samples=Sample.objects.filter(dataset=dataset), by=None)
    sent = time.perf_counter() - started
    size = Sample.objects.filter(dataset=dataset).count()
    tenth = size // 10
    veteran = min(VETERAN_REVIEWS, tenth)
    others = [people[f"annotator-{n}"].pk for n in range(8)]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH chosen AS (
                SELECT sl.id, sl.sample_id, row_number() OVER (ORDER BY sl.sample_id) AS n
                FROM review_slot sl
                WHERE sl.dataset_id = %(ds)s AND sl.position = 0
                ORDER BY sl.sample_id LIMIT %(tenth)s
            ), given AS (
                UPDATE review_slot sl
                SET reviewer_id = CASE WHEN c.n <= %(veteran)s THEN %(vet)s
                                       ELSE (%(others)s::bigint[])[1 + c.n %% 8] END,
                    leased_at = now() - interval '1 hour', done = true
                FROM chosen c WHERE sl.id = c.id
                RETURNING sl.id, sl.sample_id, sl.reviewer_id
            )
            INSERT INTO review_review
                (sample_id, dataset_id, reviewer_id, client_uuid, decision, reject_reason,
                 "values", note, seconds_spent, slot_id, round, leased_at, created_at)
            SELECT g.sample_id, %(ds)s, g.reviewer_id, gen_random_uuid(), 'accept', '',
                   '{}'::jsonb, '', 12, g.id, 0, now() - interval '1 hour', now()
            FROM given g
            """,
            {
                "ds": dataset.pk,
                "tenth": tenth,
                "veteran": veteran,
                "vet": people["veteran"].pk,
                "others": others,
            },
        )
        for table in ("review_slot", "review_review", "annotation_sample"):
            cursor.execute(f"ANALYZE {table}")
    return {
        "send_to_review_s": round(sent, 1),
        "reviews": tenth,
        "veteran_reviews": veteran,
        "seed_review_s": round(time.perf_counter() - started, 1),
    }


def seed_audit(dataset: Any) -> dict[str, Any]:
    from judging.audit import computations, services

    started = time.perf_counter()
    computations.frame_strata_compute(dataset=dataset, task="scoring")
    services.audit_set_draw(
        dataset=dataset, name="scale", task="scoring", size=2000, method="sqrt", floor=5
    )
    return {"seed_audit_s": round(time.perf_counter() - started, 1)}


# --- measuring ------------------------------------------------------------------------------


def timed_gets(client: Any, url: str, gets: int, **params: Any) -> dict[str, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    first = client.get(url, params)  # warm: imports, templates, plans
    assert first.status_code == 200, (url, params, first.status_code)
    times = []
    for _ in range(gets):
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            answer = client.get(url, params)
            times.append(time.perf_counter() - started)
        assert answer.status_code == 200, (url, answer.status_code)
    return {**p50_p95(times), "queries": len(queries)}


def p50_p95(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def pages(dataset: Any, people: dict[str, Any], gets: int) -> dict[str, Any]:
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Sample
    from judging.models import AuditSet

    ds = dataset.pk
    lead = Client()
    lead.force_login(people["lead"])
    size = Sample.objects.filter(dataset=dataset).count()
    samples = reverse("annotation:sample_list", args=[ds])
    out: dict[str, Any] = {}
    out["sample_list"] = timed_gets(lead, samples, gets)
    for name, params in {
        "status": {"status": "pending_review"},
        "category": {"category": "VFP"},
        "question_format": {"question_format": "mcq"},
        "judges_disagree": {"judges_disagree": "true"},
        "reviewer": {"reviewer": "scale-veteran"},
        "changed": {"changed": "true"},
        "search": {"search": "sign 4242"},
        "external_id": {"external_id": f"q{size // 2}"},
    }.items():
        out[f"sample_list_filter_{name}"] = timed_gets(lead, samples, gets, **params)
    for ordering in ("external_id", "status", "category", "priority", "updated"):
        out[f"sample_list_sort_{ordering}"] = timed_gets(lead, samples, gets, ordering=ordering)
    last_page = max(1, (size + 49) // 50)
    out["sample_list_last_page"] = timed_gets(lead, samples, gets, page=last_page)
    api = f"/api/datasets/{ds}/samples/"
    out["api_sample_list"] = timed_gets(lead, api, gets)
    out["api_sample_list_deep"] = timed_gets(lead, api, gets, offset=max(0, size - 100), limit=50)
    out["dataset_page"] = timed_gets(lead, reverse("annotation:dataset_detail", args=[ds]), gets)
    out["progress"] = timed_gets(lead, reverse("review:progress", args=[ds]), gets)
    out["reviewers"] = timed_gets(lead, reverse("review:reviewers", args=[ds]), gets)
    out["leaderboard"] = timed_gets(lead, reverse("judging:leaderboard", args=[ds]), gets)
    audit = AuditSet.objects.get(dataset=dataset, name="scale")
    out["audit_planner_preview"] = timed_gets(
        lead,
        reverse("judging:audit_new", args=[ds]),
        gets,
        task="scoring",
        size=2000,
        method="sqrt",
        floor=5,
        seed=0,
    )
    out["audit_statistics"] = timed_gets(
        lead, reverse("judging:audit_statistics", args=[audit.pk]), gets
    )
    auditor = Client()
    auditor.force_login(people["auditor"])
    out["auditor_audit_page"] = timed_gets(
        auditor, reverse("judging:audit_detail", args=[audit.pk]), gets
    )
    annotator = Client()
    annotator.force_login(people["newcomer"])
    out["annotator_queue_page"] = timed_gets(annotator, reverse("review:queue", args=[ds]), gets)
    return out


def review_loop(dataset: Any, reviewer: Any, loops: int) -> dict[str, Any]:
    """``loops`` claims and submits over the API by one reviewer."""
    from django.test import Client

    client = Client()
    client.force_login(reviewer)
    claims, submits = [], []
    started = time.perf_counter()
    for _ in range(loops):
        t0 = time.perf_counter()
        claimed = client.post(f"/api/datasets/{dataset.pk}/claim/", {}, "application/json")
        t1 = time.perf_counter()
        if claimed.status_code == 204:
            break
        assert claimed.status_code == 200, claimed.content[:300]
        body = claimed.json()
        submitted = client.post(
            "/api/reviews/",
            {
                "client_uuid": str(uuid.uuid4()),
                "sample": body["sample"]["id"],
                "decision": "accept",
                "seconds_spent": 3,
            },
            "application/json",
        )
        assert submitted.status_code == 201, submitted.content[:300]
        claims.append(t1 - t0)
        submits.append(time.perf_counter() - t1)
    seconds = time.perf_counter() - started
    return {
        "loops": len(claims),
        "loops_per_s": round(len(claims) / seconds, 1) if seconds else 0.0,
        "claim": p50_p95(claims),
        "submit": p50_p95(submits),
    }


# --- jobs, each in a process of its own -----------------------------------------------------


def job(kind: str, workdir: Path, rows: int) -> dict[str, Any]:
    from annotation.models import Dataset, Sample

    dataset = Dataset.objects.get(name=DATASET)
    out: dict[str, Any] = {}
    if kind == "plan":
        from judging.models import Judge, JudgeJob
        from judging.services import jobs

        judge = Judge.objects.get(name="rule")
        job = jobs.judge_job_start(dataset=dataset, task="answerability", judges=[judge])
        started = time.perf_counter()
        jobs.judge_job_plan(job_id=job.pk)
        out["seconds"] = round(time.perf_counter() - started, 2)
        JudgeJob.objects.filter(pk=job.pk).update(status="cancelled")
    elif kind == "queue-sync":
        from review.queue.services import queue_sync

        started = time.perf_counter()
        out["slots_created"] = queue_sync(dataset=dataset)
        out["seconds"] = round(time.perf_counter() - started, 2)
    elif kind in {"import", "reimport"}:
        size = Sample.objects.filter(dataset=dataset, external_id__startswith="q").count()
        path = workdir / "more.jsonl"
        if kind == "import" or not path.exists():
            write_rows(path, size + 1_000_000_000, rows)  # ids no build uses
        out = import_file(dataset, path)
    else:
        from annotation.models import SampleStatus
        from annotation.snapshots import services as snapshots
        from bench.bench_import import backend_cpu_seconds

        fmt = kind.removeprefix("snapshot-")
        snapshot = snapshots.snapshot_create(
            dataset=dataset,
            name=f"scale-{fmt}-{time.time_ns()}",
            format=fmt,
            filter={"statuses": list(snapshots.EXPORTABLE_STATUSES)},
            queue=False,
        )
        backend = backend_pid()
        cpu = (process_cpu_seconds(), backend_cpu_seconds(backend))
        started = time.perf_counter()
        finished = snapshots.snapshot_build(snapshot_id=snapshot.pk)
        out["seconds"] = round(time.perf_counter() - started, 2)
        # CPU seconds, which a loaded machine's queue for the cores does not inflate.
        out["cpu_s"] = round(process_cpu_seconds() - cpu[0], 2)
        out["backend_cpu_s"] = round(backend_cpu_seconds(backend) - cpu[1], 2)
        assert finished is not None and finished.status == "succeeded", (
            finished and finished.message
        )
        every = Sample.objects.filter(dataset=dataset).exclude(status=SampleStatus.REMOVED)
        out["entries"] = finished.done
        assert finished.done == every.count(), (finished.done, every.count())
        out["file_mb"] = round(finished.manifest["artifact"]["bytes"] / 1e6, 1)
        out["samples_per_s"] = round(finished.done / out["seconds"], 1)
        out["sha256"] = finished.manifest["artifact"]["sha256"]  # a change's output unchanged
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def process_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM: unlike ru_maxrss, not carried over from the
    parent that forked it, which is far larger here)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_job(
    kind: str, prefix: str, size: int, workdir: Path, rows: int, only: str | None = None
) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--job",
            kind,
            "--size",
            str(size),
            "--workdir",
            str(workdir),
            "--import-rows",
            str(rows),
            "--db-prefix",
            prefix,
            *(["--only", only] if only else []),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"job {kind} at {size} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def leaderboard_recompute(dataset: Any) -> float:
    """Seconds of one recomputation of the leaderboard's aggregates, as a worker runs it."""
    from judging.leaderboard_store import leaderboard_compute

    started = time.perf_counter()
    row = leaderboard_compute(dataset=dataset)
    assert row is not None and row.status == "succeeded", row and row.message
    return round(time.perf_counter() - started, 2)


def build_leaderboard_only(size: int) -> Any:
    """A dataset for the leaderboard alone: 12 samples through the services, copied by SQL to
    ``size`` over the strata, a few rejected and taken down, then responses and verdicts."""
    dataset = copied_samples(size, "lb")
    make_people(dataset)
    seed_judging(dataset)
    return dataset


def copied_samples(size: int, tag: str) -> Any:
    """12 samples through the services, copied by SQL to ``size`` over MMOOC's groups,
    categories, formats and scenarios (1 % rejected, 0.5 % taken down; priorities 0-4 and last
    changes spread over the last days out of import order), external ids ``<tag>-<n>``."""
    from django.db import connection
    from psycopg import sql

    from annotation.models import Dataset, Sample
    from tests.annotation.factories import mmooc_dataset
    from tests.judging.factories import bulk_samples

    Dataset.objects.filter(name=DATASET).delete()
    dataset = mmooc_dataset(name=DATASET)
    bulk_samples(dataset, 12)
    varied = {
        "external_id": sql.SQL("{} || g").format(sql.Literal(f"{tag}-")),
        "priority": sql.SQL("(g::bigint * 7919) %% 5"),
        "updated_at": sql.SQL("now() - ((g::bigint * 7919) %% 1000003) * interval '1 second'"),
        "answerability_group": sql.SQL("(ARRAY['shifted_ic', 'ooc', 'ooc'])[1 + g %% 3]"),
        "category_code": sql.SQL(
            "(ARRAY['MA', 'VFP', 'USPC', 'ULS', 'MKB', 'MP', 'PA', 'IQM'])[1 + g %% 8]"
        ),
        "question_format": sql.SQL("(ARRAY['mcq', 'yesno', 'vqa'])[1 + g %% 3]"),
        "scenario": sql.SQL(
            "(ARRAY['coarse_perception', 'fine_grained_perception', 'instance_reasoning', "
            "'logical_reasoning', 'math', 'science_and_technology'])[1 + (g / 7) %% 6]"
        ),
        "status": sql.SQL(
            "CASE WHEN g %% 200 = 1 THEN 'removed' WHEN g %% 100 = 3 THEN 'rejected' "
            "ELSE 'pending_review' END"
        ),
    }
    columns = [f.column for f in Sample._meta.concrete_fields if f.column != "id"]
    template = Sample.objects.filter(dataset=dataset).order_by("id").first()
    assert template is not None
    statement = sql.SQL(
        "INSERT INTO annotation_sample ({columns}) SELECT {values} FROM annotation_sample s, "
        "generate_series(1, %s) AS g WHERE s.id = %s"
    ).format(
        columns=sql.SQL(", ").join(sql.Identifier(c) for c in columns),
        values=sql.SQL(", ").join(
            varied.get(c, sql.SQL("s.") + sql.Identifier(c)) for c in columns
        ),
    )
    with connection.cursor() as cursor:
        cursor.execute(statement.as_string(None), [size, template.pk])
        cursor.execute(
            "DELETE FROM annotation_sample WHERE dataset_id = %s AND external_id LIKE 'bulk-%%'",
            [dataset.pk],
        )
        cursor.execute("ANALYZE annotation_sample")
    return dataset


def leaderboard_only(args: argparse.Namespace) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    size = args.size
    figures: dict[str, Any] = {"size": size, "load_average_before": os.getloadavg()}
    dataset = built(size) if args.reuse else None
    if dataset is None:
        started = time.perf_counter()
        dataset = build_leaderboard_only(size)
        figures["build_s"] = round(time.perf_counter() - started, 1)
    figures["recompute_s"] = [leaderboard_recompute(dataset) for _ in range(2)]
    lead = Client()
    lead.force_login(get_user_model().objects.get(username="scale-lead"))
    url = reverse("judging:leaderboard", args=[dataset.pk])
    figures["leaderboard"] = timed_gets(lead, url, args.gets)
    figures["api_leaderboard"] = timed_gets(
        lead, reverse("api_leaderboard", args=[dataset.pk]), args.gets
    )
    if args.direct:
        from tests.judging.leaderboard_reference import direct_leaderboard

        started = time.perf_counter()
        direct_leaderboard(dataset=dataset)
        figures["direct_selector_s"] = round(time.perf_counter() - started, 2)
    figures["load_average_after"] = os.getloadavg()
    return figures


def build_sample_list_only(size: int) -> Any:
    """A dataset for the sample list alone: the copied samples, one image linked to each (the
    list shows a thumbnail per sample), the people, then ``VACUUM ANALYZE`` as autovacuum would
    leave the table."""
    from django.db import connection

    from tests.annotation.factories import image_asset

    dataset = copied_samples(size, "sl")
    asset = image_asset()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO annotation_samplemedia (sample_id, asset_id, role, position) "
            "SELECT id, %s, 'image', 0 FROM annotation_sample WHERE dataset_id = %s",
            [asset.pk, dataset.pk],
        )
    make_people(dataset)
    with connection.cursor() as cursor:
        for table in ("annotation_sample", "annotation_samplemedia"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    return dataset


def sample_list_only(args: argparse.Namespace) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Sample
    from annotation.sample_filters import ORDERINGS

    size = args.size
    figures: dict[str, Any] = {"size": size, "load_average_before": os.getloadavg()}
    dataset = built(size) if args.reuse else None
    if dataset is None:
        started = time.perf_counter()
        dataset = build_sample_list_only(size)
        figures["build_s"] = round(time.perf_counter() - started, 1)
    lead = Client()
    lead.force_login(get_user_model().objects.get(username="scale-lead"))
    url = reverse("annotation:sample_list", args=[dataset.pk])
    gets = args.gets
    figures["sample_list"] = timed_gets(lead, url, gets)
    for key in ORDERINGS:
        for direction in ("", "-"):
            name = f"sample_list_sort_{direction and 'desc_'}{key}"
            figures[name] = timed_gets(lead, url, gets, ordering=f"{direction}{key}")
    middle = Sample.objects.filter(dataset=dataset).order_by("id").values_list("id", flat=True)
    middle_id = middle[size // 2] if size > 1 else middle[0]
    cursor = middle_cursor(dataset, middle_id)
    if cursor is not None:
        figures["sample_list_middle"] = timed_gets(lead, url, gets, cursor=cursor)
    figures["sample_list_middle_by_number"] = timed_gets(lead, url, gets, page=max(1, size // 100))
    # The last page: its link (page=last, the order reversed), or its number before that.
    last = "last" if cursor is not None else max(1, (size + 49) // 50)
    figures["sample_list_last_page"] = timed_gets(lead, url, gets, page=last)
    api = f"/api/datasets/{dataset.pk}/samples/"
    figures["api_sample_list"] = timed_gets(lead, api, gets)
    if cursor is not None:
        figures["api_sample_list_deep"] = timed_gets(lead, api, gets, cursor=cursor)
    figures["api_sample_list_deep_offset"] = timed_gets(
        lead, api, gets, offset=max(0, size - 100), limit=50
    )
    figures["load_average_after"] = os.getloadavg()
    return figures


def build_jobs_only(size: int, workdir: Path, seed_rows: int) -> dict[str, Any]:
    """A dataset for the jobs alone: ``seed_rows`` rows through the real import path, copied
    by SQL to ``size`` (own external id, question and content hash; the original's media and
    first revision), nine in ten pending review with two open slots each, a tenth verified."""
    from django.core.management import call_command
    from django.db import connection
    from psycopg import sql

    from annotation.imports import services as import_services
    from annotation.models import Dataset, Sample, SampleMedia, SampleRevision
    from core.leases import OPEN_SINCE
    from review.queue.services import review_settings_update

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    out: dict[str, Any] = {}
    Dataset.objects.filter(name=DATASET).delete()
    dataset = import_services.import_dataset_get_or_create(
        name=DATASET, format="mmooc", preset="mmooc"
    )
    seed = min(seed_rows, size)
    out["seed_import"] = import_file(dataset, write_rows(workdir / "seed.jsonl", 0, seed))
    started = time.perf_counter()
    varied = {
        "external_id": sql.SQL("'c-' || g"),
        "question": sql.SQL("s.question || ' #' || g"),
        "content_hash": sql.SQL("encode(sha256(convert_to(s.content_hash || g, 'UTF8')), 'hex')"),
        "question_key": sql.SQL("s.question_key # g::bigint"),
        "status": sql.SQL("CASE WHEN g %% 10 = 0 THEN 'verified' ELSE 'pending_review' END"),
    }
    columns = [f.column for f in Sample._meta.concrete_fields if f.column != "id"]
    originals = sql.SQL(
        "(SELECT o.*, row_number() OVER (ORDER BY o.id) - 1 AS rn FROM {sample} o "
        "WHERE o.dataset_id = %(ds)s AND o.external_id LIKE 'q%%')"
    ).format(sample=sql.Identifier(Sample._meta.db_table))
    samples = sql.SQL(
        "INSERT INTO {sample} ({columns}) SELECT {values} "
        "FROM generate_series(1, %(copies)s) AS g JOIN {originals} s ON s.rn = g %% %(seed)s"
    ).format(
        sample=sql.Identifier(Sample._meta.db_table),
        columns=sql.SQL(", ").join(sql.Identifier(c) for c in columns),
        values=sql.SQL(", ").join(
            varied.get(c, sql.SQL("s.") + sql.Identifier(c)) for c in columns
        ),
        originals=originals,
    )
    # Each copy's media links and first revision: its original's, by the same number.
    linked = {
        SampleMedia: ("asset_id", "role", "position"),
        SampleRevision: (
            "number",
            "changed_by_id",
            "changed_at",
            "source",
            "before",
            "after",
            "reason",
        ),
    }
    copied = [
        sql.SQL(
            "INSERT INTO {table} (sample_id, {columns}) SELECT c.id, {values} "
            "FROM {sample} c JOIN {originals} s "
            "ON s.rn = substr(c.external_id, 3)::bigint %% %(seed)s "
            "JOIN {table} t ON t.sample_id = s.id "
            "WHERE c.dataset_id = %(ds)s AND c.external_id LIKE 'c-%%'"
        ).format(
            table=sql.Identifier(model._meta.db_table),
            columns=sql.SQL(", ").join(sql.Identifier(c) for c in names),
            values=sql.SQL(", ").join(sql.Identifier("t", c) for c in names),
            sample=sql.Identifier(Sample._meta.db_table),
            originals=originals,
        )
        for model, names in linked.items()
    ]
    params: dict[str, Any] = {
        "ds": dataset.pk,
        "copies": size - seed,
        "seed": seed,
        "open": OPEN_SINCE,
    }
    review_settings_update(
        dataset=dataset, overlap=2, blind=True, show_judge_hints=False, lease_seconds=900
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE annotation_sample SET status = 'pending_review' WHERE dataset_id = %(ds)s",
            params,
        )
        cursor.execute(samples.as_string(None), params)
        for statement in copied:
            cursor.execute(statement.as_string(None), params)
        cursor.execute(
            """
            INSERT INTO review_slot
                (dataset_id, sample_id, round, position, judges_disagree, priority,
                 lease_expires_at, done, gold, reserved)
            SELECT s.dataset_id, s.id, 0, p, false, 0, %(open)s, false, false, false
            FROM annotation_sample s CROSS JOIN generate_series(0, 1) AS p
            WHERE s.dataset_id = %(ds)s AND s.status = 'pending_review'
            """,
            params,
        )
        for table in ("annotation_sample", "annotation_samplemedia", "annotation_samplerevision"):
            cursor.execute(f"ANALYZE {table}")
        cursor.execute("ANALYZE review_slot")
    out["copy_s"] = round(time.perf_counter() - started, 1)
    return out


def jobs_only(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from annotation.models import Sample

    size = args.size
    figures: dict[str, Any] = {"size": size, "load_average_before": os.getloadavg()}
    held = Sample.objects.filter(dataset__name=DATASET).count() if args.reuse else 0
    if not size <= held <= size + 10 * args.import_rows:  # reused after a few imports
        started = time.perf_counter()
        figures["build"] = build_jobs_only(size, workdir, args.seed_rows)
        figures["build"]["build_s"] = round(time.perf_counter() - started, 1)
    figures["samples"] = Sample.objects.filter(dataset__name=DATASET).count()
    kinds = ["import", "reimport"]
    if args.snapshots:
        kinds += ["snapshot-jsonl", "snapshot-parquet"]
    if args.full_sync:
        kinds.append("queue-sync")
    figures["jobs"] = {}
    for kind in kinds:
        figures["jobs"][kind] = run_job(
            kind, args.db_prefix, size, workdir, args.import_rows, only="jobs"
        )
        figures["jobs"][kind]["load_average_after"] = os.getloadavg()
    figures["load_average_after"] = os.getloadavg()
    return figures


def middle_cursor(dataset: Any, sample_id: int) -> str | None:
    """The cursor the list's links carry for the page after ``sample_id`` in import order, or
    None where the site has no cursors (before keyset pages)."""
    try:
        from core.keyset import Cursor
    except ImportError:
        return None
    return Cursor(order=("id",), values=(sample_id,), before=False).encode()


def child(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    size = args.size
    figures: dict[str, Any] = {"size": size, "load_average_before": os.getloadavg()}
    dataset = built(size) if args.reuse else None
    if dataset is None:
        dataset, figures["build"] = build(size, workdir)
    users = get_user_model().objects.filter(username__startswith="scale-")
    people = {u.username.removeprefix("scale-"): u for u in users}
    figures["leaderboard_recompute_s"] = leaderboard_recompute(dataset)
    figures["pages"] = pages(dataset, people, args.gets)
    figures["review_newcomer"] = review_loop(dataset, people["newcomer"], args.loops)
    figures["review_veteran"] = review_loop(dataset, people["veteran"], args.loops)
    figures["web_peak_rss_mb"] = peak_rss_mb()
    kinds = ["plan", "import", "reimport"]
    if args.snapshots:
        kinds += ["snapshot-jsonl", "snapshot-parquet"]
    figures["jobs"] = {
        kind: run_job(kind, args.db_prefix, size, workdir, args.import_rows) for kind in kinds
    }
    figures["load_average_after"] = os.getloadavg()
    return figures


def flatten(figures: dict[str, Any], prefix: str = "") -> dict[str, float]:
    flat: dict[str, float] = {}
    for key, value in figures.items():
        if isinstance(value, dict):
            flat |= flatten(value, f"{prefix}{key}.")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            flat[f"{prefix}{key}"] = float(value)
    return flat


def ratios(small: dict[str, Any], large: dict[str, Any]) -> dict[str, float]:
    """Each measured figure at the largest size over its figure at the smallest."""
    a, b = flatten(small), flatten(large)
    skip = ("build", "load_average", "size", "queries")
    return {
        key: round(b[key] / a[key], 2)
        for key in sorted(a.keys() & b.keys())
        if a[key] and not key.startswith(skip) and ".queries" not in key
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="41883,250000,1000000")
    parser.add_argument("--reuse", action="store_true", help="keep a dataset built earlier")
    parser.add_argument("--gets", type=int, default=10)
    parser.add_argument("--loops", type=int, default=200)
    parser.add_argument("--import-rows", type=int, default=10_000)
    parser.add_argument("--no-snapshots", dest="snapshots", action="store_false")
    parser.add_argument("--db-prefix", default="bench_scale", help="databases <prefix>_<size>")
    parser.add_argument(
        "--var", default=str(ROOT / "var" / "bench-scale"), help="media and files, per size"
    )
    parser.add_argument(
        "--only",
        choices=["leaderboard", "sample_list", "jobs"],
        help="measure this page, or the jobs, alone",
    )
    parser.add_argument(
        "--direct", action="store_true", help="with --only leaderboard: the pre-issue-30 way too"
    )
    parser.add_argument(
        "--seed-rows", type=int, default=1000, help="with --only jobs: rows imported, then copied"
    )
    parser.add_argument(
        "--full-sync",
        action="store_true",
        help="with --only jobs: one queue sync over the whole dataset too",
    )
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--job", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    # --only has a database of its own: its dataset is not the full bench's.
    tag = {"leaderboard": "lb", "sample_list": "sl", "jobs": "jobs"}.get(args.only or "")
    prefix = f"{args.db_prefix}_{tag}" if tag else args.db_prefix
    if args.size is not None:  # a child: one size, or one job at one size
        workdir = Path(args.workdir)
        setup_django(prefix, args.size, workdir)
        if args.job:
            result = job(args.job, workdir, args.import_rows)
        elif args.only == "jobs":
            result = jobs_only(args, workdir)
        elif args.only == "leaderboard":
            result = leaderboard_only(args)
        elif args.only == "sample_list":
            result = sample_list_only(args)
        else:
            result = child(args, workdir)
        print(json.dumps(result))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    if not args.reuse:
        make_databases(prefix, sizes)
    results = []
    for size in sizes:
        workdir = Path(args.var).resolve() / (f"{tag}-{size}" if tag else str(size))
        if not args.reuse:  # media of this run's own, beside its fresh database
            shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, __file__, "--size", str(size), "--workdir", str(workdir)]
        command += ["--db-prefix", args.db_prefix]
        command += ["--gets", str(args.gets), "--loops", str(args.loops)]
        command += ["--import-rows", str(args.import_rows)]
        if args.only:
            command += ["--only", args.only] + (["--direct"] if args.direct else [])
            command += ["--seed-rows", str(args.seed_rows)]
            command += ["--full-sync"] if args.full_sync else []
        command += [
            flag
            for flag, on in (("--reuse", args.reuse), ("--no-snapshots", not args.snapshots))
            if on
        ]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"size {size} failed:\n{done.stderr[-4000:]}")
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(json.dumps({"sizes": results, "ratios": ratios(results[0], results[-1])}))


if __name__ == "__main__":
    main()
