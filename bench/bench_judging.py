"""Benchmark of judge jobs: 2,000 items x 3 judges against the fake endpoint, real worker.

Needs PostgreSQL and Redis (the production shape): DATABASE_URL=postgres://… REDIS_URL=redis://…
A throwaway database (test_<name>) is created and dropped. A real Celery worker process (prefork,
two processes per judge by default) runs the chunks, each judge's concurrency cap held across
them in Redis; the fake OpenAI server answers from a process of its own and reports the peak
number of concurrent requests each judge received.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h_judging \
    REDIS_URL=redis://127.0.0.1:6379/5 .venv/bin/python bench/bench_judging.py

Prints progress, then one JSON object on the last line: verdicts/s at 200 ms latency, its
ratio to the ideal (judges x concurrency / latency = 480/s) and the overhead per verdict at
zero latency.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings_test")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"
os.environ.setdefault("CELERY_QUEUE", f"bench-{uuid.uuid4().hex[:8]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--worker-processes", type=int, default=None)
    parser.add_argument("--chunk-size", type=int, default=50)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("Set DATABASE_URL=postgres://… (and REDIS_URL): the bench uses the real stack.")
    if not os.environ.get("REDIS_URL"):
        sys.exit("Set REDIS_URL=redis://…")

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    from annotation import services as annotation_services
    from annotation.models import DatasetKind, Sample, SampleStatus
    from judging import services
    from judging.models import JudgeJob, ModelResponse
    from mmooc_site.celery import app
    from tests.support.processes import celery_worker, free_port, wait_until

    @contextmanager
    def fake_server(latency: float) -> Iterator[str]:
        """The fake endpoint in a process of its own: sharing a process (and its GIL) with
        other busy threads would slow it down and measure the fake, not the judging."""
        port = free_port()
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.fake_openai",
                "--port",
                str(port),
                "--latency",
                str(latency),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
        )
        try:
            assert process.stdout is not None
            process.stdout.readline()  # "fake OpenAI server at …" once it listens
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            process.terminate()
            process.wait(timeout=10)

    app.conf.task_always_eager = False
    test_db = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    db = connection.settings_dict
    database_url = (
        f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT']}/{test_db}"
    )
    results: dict[str, object] = {}
    try:
        dataset = annotation_services.dataset_create(
            name="bench", kind=DatasetKind.IMAGE_QUESTION, preset="mmooc"
        )
        Sample.objects.bulk_create(
            Sample(
                dataset=dataset,
                external_id=f"b{i}",
                question=f"Question {i}: which option fits?",
                question_format="mcq",
                reference_answer="A",
                explanation=f"reason {i}",
                answerability_group="shifted_ic",
                category_code="MP",
                status=SampleStatus.PENDING_REVIEW,
            )
            for i in range(args.items)
        )
        ModelResponse.objects.bulk_create(
            ModelResponse(dataset=dataset, sample=s, model_name="m", response=f"A, item {s.pk}")
            for s in Sample.objects.filter(dataset=dataset)
        )
        processes = args.worker_processes or 2 * args.judges
        env = {"DATABASE_URL": database_url, "CELERY_BROKER_URL": os.environ["REDIS_URL"]}

        def run(latency: float, tag: str) -> tuple[float, int, int, int]:
            with fake_server(latency) as base_url:
                # The fake listens on loopback: allowed explicitly, here and in the workers.
                allowed = base_url.split("/")[2]
                settings.JUDGE_ALLOWED_HOSTS = [allowed]
                judges = [
                    services.judge_create(
                        name=f"{tag}-{j}",
                        base_url=base_url,
                        model=f"fake-{j}",
                        max_concurrency=args.concurrency,
                        timeout_s=30,
                    )
                    for j in range(args.judges)
                ]
                with celery_worker({**env, "JUDGE_ALLOWED_HOSTS": allowed}, concurrency=processes):
                    started = time.perf_counter()
                    job = services.judge_job_start(
                        dataset=dataset,
                        task="scoring",
                        judges=judges,
                        chunk_size=args.chunk_size,
                    )

                    def done() -> bool:
                        job.refresh_from_db()
                        return job.is_finished

                    wait_until(done, timeout=900, what=f"the {tag} job")
                    wall = time.perf_counter() - started
                made = job.verdicts.count()
                errors = job.verdicts.exclude(error_kind="").count()
                assert JudgeJob.objects.get(pk=job.pk).status == "succeeded"
                # The fake counts concurrent requests per model (one model per judge): the
                # judges' caps must have held across all the worker processes.
                stats = httpx.get(f"{base_url}/fake/stats").json()
                peak = max(stats["max_in_flight"].values())
                print(f"{tag}: {made} verdicts ({errors} errors) in {wall:.2f} s", flush=True)
                return wall, made, errors, peak

        wall, made, errors, peak = run(args.latency, "latency")
        ideal = args.judges * args.concurrency / args.latency
        rate = made / wall
        zero_wall, zero_made, _zero_errors, zero_peak = run(0.0, "zero")
        results = {
            "items": args.items,
            "judges": args.judges,
            "concurrency_per_judge": args.concurrency,
            "latency_s": args.latency,
            "worker_processes": processes,
            "chunk_size": args.chunk_size,
            "max_in_flight_per_judge": max(peak, zero_peak),
            "verdicts": made,
            "errors": errors,
            "wall_s": round(wall, 2),
            "verdicts_per_s": round(rate, 1),
            "ideal_verdicts_per_s": round(ideal, 1),
            "ratio_to_ideal": round(rate / ideal, 3),
            "zero_latency_verdicts_per_s": round(zero_made / zero_wall, 1),
            "overhead_ms_per_verdict_at_zero_latency": round(1000 * zero_wall / zero_made, 3),
            "overhead_cpu_ms_per_verdict_at_zero_latency": round(
                1000 * zero_wall * min(processes, os.cpu_count() or 1) / zero_made, 3
            ),
        }
    finally:
        connection.creation.destroy_test_db(test_db, verbosity=0)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
