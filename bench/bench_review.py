"""Benchmark: the review queue over HTTP (gunicorn, PostgreSQL) against the bare SQL claim.

Builds its own database (``bench_review`` by default, dropped and migrated), a 41,883-sample
MMOOC-shaped dataset sharing one small image, k = 2, and its queue. Then, each phase bounded
in time:

1. bare SQL: N threads, each with its own psycopg connection, run the queue's claim
   statement (same WHERE, ORDER BY, partial index and SKIP LOCKED as the site; the slot is
   retired in the same statement so one reviewer can claim again), one transaction each;
2. floors, on gunicorn serving ``bench/floor_site.py`` (the site's settings and middleware
   with the two stand-in views of ``bench/floor_urls.py``): the same N client threads send
   ``GET /healthz/`` (no database), which shows how many requests per second this web stack
   answers at all; then N reviewers loop the bare claim statement run inside a Django view
   plus a no-op "submit" request, the least any Django implementation of the two API calls
   could cost (the queue is reset after); then, with ``statements``, the "statements floor"
   (``bench/statements_floor.py``): the statements and Redis round trips the real loop sends,
   with token auth, and the least Python around them (``--statements-drop throttle``: not
   the throttle);
3. site: N reviewers (threads with a keep-alive stdlib HTTP connection and token auth) loop
   ``POST /api/datasets/{id}/claim/`` then ``POST /api/reviews/`` against the real site;
   ``ratio_site_to_floor`` is its loops/s over the floor site's. The floor site, statements
   floor and site phases run in ``--rounds`` interleaved rounds (3 by default), since the
   machine's speed drifts between minutes: each round's ratios are of phases run side by side,
   the reported ratios are the rounds' medians (``closed_loop_rounds`` lists every round),
   the rates the medians of the rounds' rates;
4. open loop (``bench/open_loop.py``): 500 reviewers, each with its own token, start a
   claim + submit loop on their own Poisson clocks (mean 10 s apart: 50 loops/s offered) for
   60 s after a 10 s warm-up, against the README's production shape (gunicorn --preload,
   2 workers x 4 threads); latencies count from each loop's due time.

After every phase that writes reviews, the database is checked: no reviewer holding two open
leases, no sample with more than k reviews, nobody reviewing a sample twice.

The HTTP client is ``http.client`` rather than a richer library so that the load generator,
which shares the machine's cores with gunicorn and PostgreSQL, costs as little as it can.

Prints the phases' rates, p50/p95/p99 latency, ratios and invariants as JSON on the last line.

Run: .venv/bin/python bench/bench_review.py [--samples 41883] [--reviewers 50] [--seconds 30]
     [--workers 3 --threads 8] [--reuse: keep an earlier run's database, reset its queue]
     [--rounds 3]
     [--phases bare,floor,statements,site,open,browser] [--statements-drop throttle]
     [--open-reviewers 500 --open-gap 10 --open-seconds 60]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from psycopg import sql  # noqa: E402

from bench.open_loop import open_loop_phase  # noqa: E402
from bench.review_db import invariants, load_built, reset_queue  # noqa: E402
from bench.support import (  # noqa: E402
    Http,
    floor_phase,
    make_database,
    percentiles,
    production_env,
    run_together,
)
from review.queue.statements import NEXT_SLOT  # noqa: E402 - after the repository joins the path

# The site's own next-slot subquery; the slot is retired at once so one reviewer can go on.
CLAIM_SQL = (
    sql.SQL("""
UPDATE review_slot SET reviewer_id = %(me)s, leased_at = %(now)s,
       lease_expires_at = %(now)s + interval '15 minutes', done = true
WHERE id = ({next_slot})
RETURNING id, sample_id
""")
    .format(next_slot=NEXT_SLOT)
    .as_string(None)
)
# What the next-slot subquery takes besides the reviewer, the dataset and the time.
CLAIM_PARAMS = {"skipped": False, "sample": None}


def build(n_samples: int, n_reviewers: int, k: int, bare: int | None = None) -> dict[str, Any]:
    """Dataset, samples, queue and reviewers: ``n_reviewers`` site reviewers with tokens and
    ``bare`` (as many by default) bare ones, by id."""
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from rest_framework.authtoken.models import Token

    from annotation import services
    from annotation.models import Sample, SampleMedia, SampleStatus
    from core import roles
    from review.queue import services as review_services
    from tests.annotation.factories import png_bytes

    dataset = services.dataset_create(name="bench MMOOC", kind="image_question", preset="mmooc")
    image = services.media_asset_store(data=png_bytes(), kind="image")
    started = time.perf_counter()
    samples = Sample.objects.bulk_create(
        (
            Sample(
                dataset=dataset,
                external_id=f"q{i}",
                question="What colour is the car behind the house?",
                question_format="mcq",
                options=[{"label": "A", "text": "Red"}, {"label": "B", "text": "None"}],
                reference_answer="B",
                explanation="There is no car.",
                answerability_group="ooc",
                category_code="VFP",
                scenario="coarse_perception",
                status=SampleStatus.PENDING_REVIEW,
                judges_disagree=i % 10 == 0,
                priority=i % 3,
            )
            for i in range(n_samples)
        ),
        batch_size=5000,
    )
    SampleMedia.objects.bulk_create(
        (SampleMedia(sample=s, asset=image, role="image", position=0) for s in samples),
        batch_size=5000,
    )
    review_services.review_settings_update(
        dataset=dataset, overlap=k, blind=True, show_judge_hints=False, lease_seconds=900
    )
    slots = review_services.queue_sync(dataset=dataset)
    annotators = Group.objects.get(name=roles.ANNOTATOR)
    tokens, bare_ids = [], []
    for i in range(n_reviewers):
        user = User.objects.create_user(username=f"bench-{i}")
        user.groups.add(annotators)
        services.dataset_add_member(dataset=dataset, user=user)
        tokens.append(Token.objects.create(user=user).key)
    for i in range(n_reviewers if bare is None else bare):
        bare_ids.append(User.objects.create_user(username=f"bare-{i}").pk)
    return {
        "dataset_id": dataset.pk,
        "tokens": tokens,
        "bare_ids": bare_ids,
        "slots": slots,
        "build_seconds": round(time.perf_counter() - started, 1),
    }


def bare_phase(db_url: str, dataset_id: int, reviewer_ids: list[int], seconds: float) -> Any:
    latencies: list[list[float]] = [[] for _ in reviewer_ids]
    barrier = threading.Barrier(len(reviewer_ids) + 1)
    deadline: list[float] = [0.0]

    def run(index: int) -> None:
        with psycopg.connect(db_url, autocommit=True) as conn:
            params: dict[str, Any] = {
                "me": reviewer_ids[index],
                "dataset": dataset_id,
                **CLAIM_PARAMS,
            }
            barrier.wait()
            while time.perf_counter() < deadline[0]:
                t0 = time.perf_counter()
                params["now"] = dt.datetime.now(dt.UTC)
                row = conn.execute(CLAIM_SQL, params).fetchone()
                if row is None:
                    break
                latencies[index].append(time.perf_counter() - t0)

    elapsed = run_together(run, len(reviewer_ids), seconds, deadline, barrier)
    flat = [x for per in latencies for x in per]
    return {"claims": len(flat), "seconds": round(elapsed, 2), "latencies": flat}


def site_phase(
    port: int,
    claim_path: str,
    submit_path: str,
    identities: list[dict[str, str]],
    seconds: float,
) -> Any:
    """N reviewers (one per identity's headers) loop claim then submit until the deadline."""
    claim_lat: list[list[float]] = [[] for _ in identities]
    submit_lat: list[list[float]] = [[] for _ in identities]
    errors: list[str] = []
    held: dict[int, int] = {}
    double: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(len(identities) + 1)
    deadline: list[float] = [0.0]

    def run(index: int) -> None:
        http = Http(port, identities[index])
        barrier.wait()
        while time.perf_counter() < deadline[0]:
            t0 = time.perf_counter()
            code, raw = http.send("POST", claim_path, {})
            t1 = time.perf_counter()
            if code == 204:
                break
            if code != 200:
                errors.append(f"claim {code}: {raw[:200]!r}")
                continue
            body = json.loads(raw)
            slot = body["lease"]["slot"]
            with lock:
                if held.get(slot, index) != index:
                    double.append(slot)
                held[slot] = index
            claim_lat[index].append(t1 - t0)
            with lock:
                held.pop(slot, None)
            t2 = time.perf_counter()
            code, raw = http.send(
                "POST",
                submit_path,
                {
                    "client_uuid": str(uuid.uuid4()),
                    "sample": body["sample"]["id"],
                    "decision": "accept",
                    "seconds_spent": 3,
                },
            )
            if code != 201:
                errors.append(f"submit {code}: {raw[:200]!r}")
                continue
            submit_lat[index].append(time.perf_counter() - t2)

    elapsed = run_together(run, len(identities), seconds, deadline, barrier)
    return {
        "claims": sum(len(x) for x in claim_lat),
        "submits": sum(len(x) for x in submit_lat),
        "seconds": round(elapsed, 2),
        "claim_latencies": [x for per in claim_lat for x in per],
        "submit_latencies": [x for per in submit_lat for x in per],
        "errors": errors[:5],
        "error_count": len(errors),
        "client_double_leases": len(double),
    }


def gunicorn_options(args: argparse.Namespace, extra: Sequence[str] = ()) -> list[str]:
    """gunicorn's command line after ``gunicorn``: the site on ``args.port`` with
    ``args.workers`` gthread workers of ``args.threads`` threads; ``extra`` adds options."""
    return [
        "mmooc_site.wsgi",
        "-b",
        f"127.0.0.1:{args.port}",
        "-w",
        str(args.workers),
        "-k",
        "gthread",
        "--threads",
        str(args.threads),
        "--log-level",
        "error",
        "--no-control-socket",  # several gunicorns may run on the machine at once
        *extra,
    ]


def wait_serving(args: argparse.Namespace, server: subprocess.Popen[bytes]) -> None:
    """Wait until the site on ``args.port`` answers /healthz/, then warm it up (every worker
    finishes booting); fail if ``server`` exits first."""
    for _ in range(300):
        try:
            if Http(args.port).send("GET", "/healthz/")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)  # waiting for gunicorn to bind; nothing to poll on instead
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode}")
    else:
        raise SystemExit("gunicorn did not answer /healthz/ within 30 s")
    floor_phase(args.port, args.reviewers, 3.0)


@contextlib.contextmanager
def gunicorn(
    args: argparse.Namespace, env: dict[str, str], extra: Sequence[str] = ()
) -> Iterator[subprocess.Popen[bytes]]:
    """gunicorn serving the settings in ``env``, bound, booted and warmed up; stopped after.

    ``extra`` adds command-line options (``--preload``); yields the master process.
    """
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", *gunicorn_options(args, extra)],
        cwd=ROOT,
        env={**env, "BENCH_CLAIM_SQL": CLAIM_SQL},
    )
    try:
        wait_serving(args, server)
        yield server
    finally:
        server.terminate()
        server.wait(timeout=30)


PHASES = ("bare", "floor", "statements", "site", "open", "browser")


def _pooled(runs: list[Any]) -> dict[str, Any]:
    """Claim and submit latencies and errors over a closed-loop phase's rounds."""
    return {
        "claim": percentiles([x for run in runs for x in run["claim_latencies"]]),
        "submit": percentiles([x for run in runs for x in run["submit_latencies"]]),
        "errors": sum(run["error_count"] for run in runs),
    }


def _phase_invariants(
    db_url: str, ds: int, k: int, name: str, seen: dict[str, dict[str, int]], client: int = 0
) -> None:
    """Check the queue after a phase (then reset it for the next one)."""
    checks = invariants(db_url, ds, k)
    checks["reviewers_with_two_open_leases"] += client
    for key, count in seen.get(name, {}).items():  # a phase run in several rounds: the sum
        checks[key] += count
    seen[name] = checks
    print(f"invariants after {name}: {checks}")
    reset_queue(db_url, ds, k)


def _open(args: argparse.Namespace, env: dict[str, str], ds: int, tokens: list[str]) -> Any:
    """The open loop against the README's production shape: gunicorn --preload, 2 workers x
    4 threads (gthread)."""
    shape = argparse.Namespace(**{**vars(args), "workers": 2, "threads": 4})
    with gunicorn(shape, env, extra=["--preload"]):
        opened = open_loop_phase(
            args.port,
            f"/api/datasets/{ds}/claim/",
            "/api/reviews/",
            tokens[: args.open_reviewers],
            mean_gap=args.open_gap,
            seconds=args.open_seconds,
            warmup=args.open_warmup,
        )
    opened["gunicorn"] = "--preload, 2 workers x 4 threads (gthread)"
    print(f"open loop: {json.dumps(opened)}")
    return opened


def _statements(args: argparse.Namespace, env: dict[str, str], ds: int, tokens: list[str]) -> Any:
    """The statements floor's closed loop, on the floor site (``bench/statements_floor.py``)."""
    with gunicorn(args, {**env, "DJANGO_SETTINGS_MODULE": "bench.floor_site"}):
        run = site_phase(
            args.port,
            f"/floor/statements/claim/{ds}/",
            "/floor/statements/submit/",
            [{"Authorization": f"Token {t}", "X-Dataset": str(ds)} for t in tokens],
            args.seconds,
        )
    rate = run["claims"] / run["seconds"]
    print(f"statements floor (drop: {args.statements_drop or '-'}): {rate:.0f} loops/s")
    return run, rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=41883)
    parser.add_argument("--reviewers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--db", default="bench_review")
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds of the closed-loop phases"
    )
    parser.add_argument("--phases", default=",".join(PHASES), help="comma-separated subset")
    parser.add_argument("--statements-drop", default="", help="throttle (leave it out)")
    parser.add_argument("--open-reviewers", type=int, default=500)
    parser.add_argument("--open-gap", type=float, default=10.0, help="mean s between loops")
    parser.add_argument("--open-seconds", type=float, default=60.0)
    parser.add_argument("--open-warmup", type=float, default=10.0)
    args = parser.parse_args()
    phases = set(args.phases.split(","))
    if phases - set(PHASES):
        parser.error(f"--phases: choose among {', '.join(PHASES)}")

    db_url = f"{args.pg}/{args.db}"
    var = Path(tempfile.mkdtemp(prefix="bench-review-"))
    (var / "staticfiles").mkdir()
    env = production_env(
        database_url=db_url,
        var_dir=var,
        CELERY_TASK_ALWAYS_EAGER="1",
        BENCH_STATEMENTS_DROP=args.statements_drop,
    )
    os.environ.update(env)
    python = sys.executable
    site_reviewers = max(args.reviewers, args.open_reviewers if "open" in phases else 0)
    if args.reuse:
        built = load_built(db_url)
        if len(built["tokens"]) < site_reviewers:
            raise SystemExit(f"--reuse: the earlier run made fewer than {site_reviewers} reviewers")
        reset_queue(db_url, built["dataset_id"], args.k)
    else:
        make_database(f"{args.pg}/postgres", args.db)
        subprocess.run(
            [python, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True
        )
        built = build(args.samples, site_reviewers, args.k, bare=args.reviewers)
    print(f"{args.samples} samples, {built['slots']} slots (built in {built['build_seconds']} s)")
    ds, k = built["dataset_id"], args.k
    seen: dict[str, dict[str, int]] = {}
    result: dict[str, Any] = {
        "samples": args.samples,
        "k": k,
        "reviewers": args.reviewers,
        "seconds_per_phase": args.seconds,
        "gunicorn": f"{args.workers} workers x {args.threads} threads (gthread)",
    }
    bare_rate = least_rate = floor_rate = site_rate = statements_rate = 0.0
    if "bare" in phases:
        bare = bare_phase(db_url, ds, built["bare_ids"], args.seconds)
        bare_rate = bare["claims"] / bare["seconds"]
        print(f"bare SQL: {bare['claims']} claims in {bare['seconds']} s = {bare_rate:.0f}/s")
        reset_queue(db_url, ds, k)  # the bare claims write no reviews: nothing to check
        result["bare_sql"] = {
            "claims": bare["claims"],
            "claims_per_s": round(bare_rate, 1),
            **percentiles(bare["latencies"]),
        }
    # The closed-loop phases run in interleaved rounds (floor site, statements floor, site;
    # again): the machine's speed drifts by 15 % and more between minutes, and a ratio of
    # phases run side by side, taken as the median of the rounds', is steadier than one pair.
    closed = [name for name in ("floor", "statements", "site") if name in phases]
    rounds: list[dict[str, Any]] = []
    runs: dict[str, list[Any]] = {name: [] for name in closed}
    for number in range(args.rounds if closed else 0):
        rates: dict[str, Any] = {"round": number + 1}
        if "floor" in phases:
            with gunicorn(args, {**env, "DJANGO_SETTINGS_MODULE": "bench.floor_site"}):
                if number == 0:
                    floor = floor_phase(args.port, args.reviewers, min(args.seconds, 10.0))
                    floor_rate = floor["requests"] / floor["seconds"]
                    print(f"framework floor: {floor['requests']} no-ops = {floor_rate:.0f}/s")
                least = site_phase(
                    args.port,
                    f"/floor/claim/{ds}/",
                    "/floor/submit/",
                    [{"X-Reviewer": str(pk)} for pk in built["bare_ids"]],
                    args.seconds,
                )
            runs["floor"].append(least)
            rates["floor_site"] = round(least["claims"] / least["seconds"], 1)
            print(f"round {number + 1}: floor site {rates['floor_site']:.0f} loops/s")
            _phase_invariants(db_url, ds, k, "floor", seen, least["client_double_leases"])
        if "statements" in phases:
            run, rate = _statements(args, env, ds, built["tokens"][: args.reviewers])
            runs["statements"].append(run)
            rates["statements_floor"] = round(rate, 1)
            _phase_invariants(db_url, ds, k, "statements", seen, run["client_double_leases"])
        if "site" in phases:
            with gunicorn(args, env):
                site = site_phase(
                    args.port,
                    f"/api/datasets/{ds}/claim/",
                    "/api/reviews/",
                    [{"Authorization": f"Token {t}"} for t in built["tokens"][: args.reviewers]],
                    args.seconds,
                )
            runs["site"].append(site)
            rates["site"] = round(site["claims"] / site["seconds"], 1)
            print(
                f"round {number + 1}: site {site['claims']} claims + {site['submits']} submits "
                f"in {site['seconds']} s = {rates['site']:.0f} loops/s, "
                f"errors {site['error_count']} {site['errors']}"
            )
            _phase_invariants(db_url, ds, k, "site", seen, site["client_double_leases"])
        for name, over in (
            ("ratio_site_to_floor", ("site", "floor_site")),
            ("ratio_statements_floor_to_floor", ("statements_floor", "floor_site")),
            ("ratio_site_to_statements_floor", ("site", "statements_floor")),
        ):
            if over[0] in rates and over[1] in rates:
                rates[name] = round(rates[over[0]] / rates[over[1]], 3)
        rounds.append(rates)
    if rounds:
        result["closed_loop_rounds"] = rounds
    if "floor" in phases:
        least_rate = statistics.median(r["floor_site"] for r in rounds)
        result["framework_floor"] = {
            "requests_per_s": round(floor_rate, 1),
            "loops_per_s_at_most": round(floor_rate / 2, 1),
            **percentiles(floor["latencies"]),
        }
        result["floor_site"] = {
            "loops_per_s": round(least_rate, 1),
            **_pooled(runs["floor"]),
        }
    if "statements" in phases:
        statements_rate = statistics.median(r["statements_floor"] for r in rounds)
        result["statements_floor"] = {
            "loops_per_s": round(statements_rate, 1),
            "dropped": args.statements_drop,
            **_pooled(runs["statements"]),
        }
    if "site" in phases:
        site_rate = statistics.median(r["site"] for r in rounds)
        result["site"] = {
            "claims": sum(r["claims"] for r in runs["site"]),
            "submits": sum(r["submits"] for r in runs["site"]),
            "claims_per_s": round(site_rate, 1),
            **_pooled(runs["site"]),
        }
    if "open" in phases:
        result["open_loop"] = _open(args, env, ds, built["tokens"])
        _phase_invariants(db_url, ds, k, "open", seen)
    if "browser" in phases:  # one reviewer in Chromium, on its own databases (production, embedded)
        from bench.bench_review_browser import measure as browser_measure

        result |= browser_measure(pg=args.pg)

    def ratio(a: float, b: float) -> float | None:
        return round(a / b, 3) if a and b else None

    def median_ratio(name: str, a: float, b: float) -> float | None:
        """The median of the rounds' ratios (each of phases run side by side)."""
        values = [r[name] for r in rounds if name in r]
        return round(statistics.median(values), 3) if values else ratio(a, b)

    result |= {
        "ratio_site_to_floor": median_ratio("ratio_site_to_floor", site_rate, least_rate),
        "ratio_site_to_bare": ratio(site_rate, bare_rate),
        "ratio_statements_floor_to_floor": median_ratio(
            "ratio_statements_floor_to_floor", statements_rate, least_rate
        ),
        "ratio_site_to_statements_floor": median_ratio(
            "ratio_site_to_statements_floor", site_rate, statements_rate
        ),
        "ratio_floor_loops_to_bare": ratio(floor_rate / 2, bare_rate),
        "ratio_floor_site_to_bare": ratio(least_rate, bare_rate),
        "invariants": seen,
        "double_leases": sum(c["reviewers_with_two_open_leases"] for c in seen.values()),
        "over_reviewed_samples": sum(c["over_reviewed_samples"] for c in seen.values()),
        "reviewed_twice": sum(c["reviewed_twice"] for c in seen.values()),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
