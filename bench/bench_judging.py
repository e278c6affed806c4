"""Benchmark of judge jobs: 2,000 items x 3 judges against the fake endpoint, real worker.

Needs PostgreSQL and Redis (the production shape): DATABASE_URL=postgres://… REDIS_URL=redis://…
A throwaway database (test_<name>) is created and dropped. A real Celery worker process (prefork,
two processes per judge by default) runs the chunks, each judge's concurrency cap held across
them in Redis; the fake OpenAI server answers from a process of its own and reports the peak
number of concurrent requests each judge received.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h_judging \
    REDIS_URL=redis://127.0.0.1:6379/5 .venv/bin/python bench/bench_judging.py

Three runs: plain (200 ms latency), the fault mix (2 % of calls hang past the judges' timeout,
15 % answer 500, 7 % 429 with Retry-After 1, 5 % a malformed verdict; retried by the judges'
policy) and zero latency (overhead). Prints progress, then one JSON object on the last line.

`ratio_to_ideal` is the share of the judges' slots kept busy: ideal = sum over judges of
concurrency / the mean time a call holds a slot. A plain call holds one for the latency; under
the mix, each request the fake counts holds one for the latency, and each hung one for the
timeout (retries and timeouts included; a call waiting out a backoff holds none). Every
(item, judge) pair must end with exactly one verdict or one error: the bench checks it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings.test")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"
os.environ.setdefault("CELERY_QUEUE", f"bench-{uuid.uuid4().hex[:8]}")

# The fault mix of issue 13: per request, 2 % hang past the timeout, 15 % 500, 7 % 429
# (Retry-After 1) and 5 % a malformed verdict.
MIX = {"hang": 0.02, "error_500": 0.15, "rate_limit": 0.07, "malformed": 0.05}


def renice(pid: int, niceness: int) -> None:
    """Set the niceness of a process and its children (a prefork worker's pool)."""
    if not niceness:
        return
    children = Path(f"/proc/{pid}/task/{pid}/children")
    for child in children.read_text().split() if children.exists() else []:
        renice(int(child), niceness)
    os.setpriority(os.PRIO_PROCESS, pid, niceness)


@dataclass
class Run:
    tag: str
    wall: float
    pairs: int
    errors: int
    peak: int
    ideal: float
    requests: dict[str, int]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--worker-processes", type=int, default=None)
    parser.add_argument("--chunk-size", type=int, default=50)
    parser.add_argument("--lanes", type=int, default=None, help="JUDGE_JOB_LANES (processes)")
    parser.add_argument("--timeout", type=float, default=2.0, help="judge timeout, mix run")
    parser.add_argument("--fake-nice", type=int, default=-10, help="the fake's niceness")
    parser.add_argument(
        "--worker-nice",
        type=int,
        default=0,
        help="the worker's niceness (e.g. -10 to measure the code, not its share of a machine "
        "loaded by other work)",
    )
    parser.add_argument(
        "--runs", default="plain,mix,zero", help="comma-separated: plain, mix, zero, profile"
    )
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
    from judging.models import JudgeJob, ModelResponse, Verdict
    from mmooc_site.celery import app
    from tests.support.processes import celery_worker, free_port, wait_until

    @contextmanager
    def fake_server(latency: float, faults: dict[str, float]) -> Iterator[str]:
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
                "--retry-after",
                "1",
                "--hang-s",
                "600",
                *(f"--fault-rate={kind}={rate}" for kind, rate in faults.items()),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            # The fake stands for a remote API: on a machine shared with other work it gets
            # the CPU first, so that the bench measures the judging, not the fake's share.
            preexec_fn=lambda: os.nice(args.fake_nice),
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
    from tests.support.processes import database_url as url_of

    database_url = url_of(connection.settings_dict, test_db)
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
        lanes = args.lanes or processes
        env = {
            "DATABASE_URL": database_url,
            "CELERY_BROKER_URL": os.environ["REDIS_URL"],
            "JUDGE_JOB_LANES": str(lanes),
        }
        settings.JUDGE_JOB_LANES = lanes
        pairs = args.items * args.judges

        def make_judges(tag: str, base_url: str, timeout: float) -> tuple[str, list[Any]]:
            # The fake listens on loopback: allowed explicitly, here and in the workers.
            allowed = base_url.split("/")[2]
            settings.JUDGE_ALLOWED_HOSTS = [allowed]
            judges = [
                services.judge_create(
                    name=f"{tag}-{j}",
                    base_url=base_url,
                    model=f"fake-{j}",
                    max_concurrency=args.concurrency,
                    timeout_s=timeout,
                )
                for j in range(args.judges)
            ]
            return allowed, judges

        def profile(latency: float) -> None:
            """One lane in this process (eager), under cProfile: where a verdict's time goes."""
            import cProfile
            import pstats

            with fake_server(latency, {}) as base_url:
                _allowed, judges = make_judges("profile", base_url, 30.0)
                settings.JUDGE_JOB_LANES = 1
                settings.JUDGE_LANE_ITEMS = args.items
                app.conf.task_always_eager = True
                profiler = cProfile.Profile()
                wall, cpu = time.perf_counter(), time.process_time()
                profiler.enable()
                job = services.judge_job_start(dataset=dataset, task="scoring", judges=judges)
                profiler.disable()
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                app.conf.task_always_eager = False
                settings.JUDGE_JOB_LANES = lanes
            made = job.verdicts.count()
            print(
                f"profile: {made} verdicts in {wall:.2f} s, {1000 * cpu / made:.3f} ms CPU "
                f"per verdict in the lane's process ({made / wall:.1f}/s)",
                flush=True,
            )
            stats = pstats.Stats(profiler, stream=sys.stdout)
            stats.sort_stats("tottime").print_stats(30)
            stats.sort_stats("cumulative").print_stats(40)

        def run(latency: float, tag: str, faults: dict[str, float], timeout: float) -> Run:
            with fake_server(latency, faults) as base_url:
                allowed, judges = make_judges(tag, base_url, timeout)
                with celery_worker(
                    {**env, "JUDGE_ALLOWED_HOSTS": allowed}, concurrency=processes
                ) as worker:
                    renice(worker.pid, args.worker_nice)
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
                # The fake counts concurrent requests per model (one model per judge): the
                # judges' caps must have held across all the worker processes.
                stats = httpx.get(f"{base_url}/fake/stats").json()
            rows = Verdict.objects.filter(judge__in=judges)
            per_pair = Counter(rows.values_list("judge_id", "response_id"))
            assert len(per_pair) == pairs, f"{tag}: {pairs - len(per_pair)} pairs without a row"
            assert set(per_pair.values()) == {1}, f"{tag}: a pair has two rows"
            errors = rows.exclude(error_kind="").count()
            status = JudgeJob.objects.get(pk=job.pk).status
            assert status == ("with_errors" if errors else "succeeded"), (tag, status, errors)
            counts = stats["faults"]
            hung = counts.get("hang", 0)
            slot_seconds = (sum(counts.values()) - hung) * latency + hung * timeout
            ideal = args.judges * args.concurrency / (slot_seconds / pairs) if latency else 0.0
            print(f"{tag}: {pairs} pairs ({errors} errors) in {wall:.2f} s, {counts}", flush=True)
            return Run(
                tag, wall, pairs, errors, max(stats["max_in_flight"].values()), ideal, counts
            )

        runs = {}
        chosen = args.runs.split(",")
        if "profile" in chosen:
            profile(args.latency)
        if "plain" in chosen:
            runs["plain"] = run(args.latency, "plain", {}, 30.0)
        if "mix" in chosen:
            runs["mix"] = run(args.latency, "mix", MIX, args.timeout)
        if "zero" in chosen:
            runs["zero"] = run(0.0, "zero", {}, 30.0)
        results = {
            "items": args.items,
            "judges": args.judges,
            "concurrency_per_judge": args.concurrency,
            "latency_s": args.latency,
            "worker_processes": processes,
            "lanes": lanes,
            "fake_nice": args.fake_nice,
            "worker_nice": args.worker_nice,
        }
        for tag, r in runs.items():
            if tag == "zero":
                results |= {
                    "zero_max_in_flight_per_judge": r.peak,
                    "zero_latency_verdicts_per_s": round(r.pairs / r.wall, 1),
                    "overhead_ms_per_verdict_at_zero_latency": round(1000 * r.wall / r.pairs, 3),
                    "overhead_cpu_ms_per_verdict_at_zero_latency": round(
                        1000 * r.wall * min(processes, os.cpu_count() or 1) / r.pairs, 3
                    ),
                }
                continue
            prefix = "" if tag == "plain" else f"{tag}_"
            results |= {
                f"{prefix}max_in_flight_per_judge": r.peak,
                f"{prefix}wall_s": round(r.wall, 2),
                f"{prefix}verdicts_per_s": round(r.pairs / r.wall, 1),
                f"{prefix}ideal_verdicts_per_s": round(r.ideal, 1),
                f"{prefix}ratio_to_ideal": round(r.pairs / r.wall / r.ideal, 3),
                f"{prefix}errors": r.errors,
            }
            if tag == "mix":
                results |= {"mix_timeout_s": args.timeout, "mix_requests": r.requests}
    finally:
        connection.creation.destroy_test_db(test_db, verbosity=0)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
