"""Benchmark: what a claim costs against the dataset's size and the reviewer's own history.

For each size in ``--sizes``, a child process works on a PostgreSQL database of that size's own
(``<--db-prefix>_<size>`` on the server of DATABASE_URL, made afresh from one migrated template
as bench_scale.py makes its own, or kept with ``--reuse``) holding one dataset of that many
samples and its queue, as bench_review.py builds them (k = 2, a tenth with the judges
disagreeing, three priorities). Then, for each history in ``--histories`` (reviews already
done by the reviewer in that dataset; default 0, 1,000 and 10,000, cut to the dataset's size),
a reviewer of their own is given that many reviews, by SQL, on the first slot of the first
samples in claim order: the worst place for them, since the other slot of each of those samples
is then the first thing the queue offers them, and they may not take it. For each reviewer:

- ``claim``: the site's claim statement (``review.queue.statements.CLAIM``) ``--claims`` times
  through Django's connection as the site runs it (prepared after five runs), each in a
  transaction rolled back after it, so that every claim sees the same queue: p50 and p95 ms;
- ``plan``: one claim's EXPLAIN ANALYZE: its execution ms and how many rows the plan read
  and threw away on the way (``rows_removed``, summed over the plan's nodes);
- ``loop``: ``--loops`` claims and submits over the API (bench_scale.py's loop, Django's test
  client), loops/s and the claim's and the submit's p50/p95.

With ``--kept-up`` (histories, as ``--histories``), ``kept_N`` gives the same for a reviewer of
N reviews whom the others kept up with: another reviewer has done the other slot of each of
their N samples, so none of them is left in the queue, which they meet as a new reviewer does
(the best place, as the first is the worst: what a claim costs for their history alone).

The reviewer's history is taken away again after their turn, so that each one meets the queue
as built. With ``--assigned N``, the first N samples in claim order are then assigned to one
new reviewer (``review.queue.assignments``: reserved for them) and ``assigned_N`` gives the
claim's p50/p95 for that assignee (served from their assignments) and for another new reviewer
(whose walk of the queue must pass over the N reserved samples at its head), each rolled back
as above. The parent prints one JSON object on its last line: the figures at each size.

Run: .venv/bin/python bench/bench_claim_scale.py [--sizes 41883,1000000] [--reuse]
     [--histories 0,1000,10000] [--claims 200] [--loops 100] [--db-prefix bench_claim_scale]
     [--assigned 0] [--kept-up 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_scale import make_databases, p50_p95, review_loop, setup_django  # noqa: E402

DATASET = "bench MMOOC"  # bench_review.build's


def built(size: int) -> Any:
    from annotation.models import Dataset, Sample

    dataset = Dataset.objects.filter(name=DATASET).first()
    if dataset is None or Sample.objects.filter(dataset=dataset).count() != size:
        return None
    return dataset


def build(size: int) -> tuple[Any, float]:
    from django.core.management import call_command

    from annotation.models import Dataset
    from bench.bench_review import build as build_queue

    call_command("createcachetable", verbosity=0)
    started = time.perf_counter()
    Dataset.objects.filter(name=DATASET).delete()
    made = build_queue(size, 0, 2, bare=0)
    return Dataset.objects.get(pk=made["dataset_id"]), round(time.perf_counter() - started, 1)


def analyze(everything: bool = False) -> None:
    """The tables a claim reads vacuumed and analyzed (all of them: ``everything``), as
    autovacuum leaves them; without statistics the planner takes the samples' one shared image
    for a rare one and reads every sample's media link to find one sample's."""
    from django.db import connection

    tables = [""] if everything else ["review_slot", "review_review", "annotation_sample"]
    tables += [] if everything else ["review_assignment"]
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"VACUUM ANALYZE {table}")


def reviewer_with_history(dataset: Any, reviews: int, kept_up: bool = False) -> Any:
    """A reviewer of the dataset who has reviewed the first ``reviews`` samples in claim order
    (their first slot done by them, with its review row, as bench_scale.py seeds its veteran);
    ``kept_up``: the other slots of those samples done too, by another reviewer."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotation import services
    from core import roles
    from tests.annotation.factories import UserFactory

    names = [f"claim-scale-{reviews}", f"claim-scale-{reviews}-other"]
    for left in get_user_model().objects.filter(username__in=names):
        forget(dataset, left)  # an interrupted run's, before its slots go with it
        left.delete()
    reviewer = UserFactory.create(username=names[0], role=roles.ANNOTATOR)
    services.dataset_add_member(dataset=dataset, user=reviewer, roles={roles.ANNOTATOR})
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH chosen AS (
                SELECT sl.id FROM review_slot sl
                WHERE sl.dataset_id = %(ds)s AND sl.position = 0 AND NOT sl.done
                ORDER BY sl.judges_disagree DESC, sl.priority DESC, sl.sample_id
                LIMIT %(n)s
            ), given AS (
                UPDATE review_slot sl
                SET reviewer_id = %(me)s, leased_at = now() - interval '1 hour', done = true
                FROM chosen c WHERE sl.id = c.id
                RETURNING sl.id, sl.sample_id
            )
            INSERT INTO review_review
                (sample_id, dataset_id, reviewer_id, client_uuid, decision, reject_reason,
                 "values", note, seconds_spent, slot_id, round, leased_at, created_at)
            SELECT g.sample_id, %(ds)s, %(me)s, gen_random_uuid(), 'accept', '',
                   '{}'::jsonb, '', 12, g.id, 0, now() - interval '1 hour', now()
            FROM given g
            """,
            {"ds": dataset.pk, "n": reviews, "me": reviewer.pk},
        )
        if kept_up:
            other = UserFactory.create(username=names[1], role=roles.ANNOTATOR)
            cursor.execute(
                """
                UPDATE review_slot sl
                SET reviewer_id = %(other)s, leased_at = now() - interval '1 hour', done = true
                FROM review_slot mine
                WHERE mine.dataset_id = %(ds)s AND mine.reviewer_id = %(me)s
                  AND sl.sample_id = mine.sample_id AND sl.round = mine.round
                  AND sl.id <> mine.id AND NOT sl.gold
                """,
                {"ds": dataset.pk, "me": reviewer.pk, "other": other.pk},
            )
    analyze()
    return reviewer


def forget(dataset: Any, reviewer: Any) -> None:
    """The reviewer's reviews and slots given back: the queue as it was built."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    others = list(
        get_user_model()
        .objects.filter(username=f"{reviewer.username}-other")
        .values_list("pk", flat=True)
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM review_review WHERE dataset_id = %s AND reviewer_id = %s",
            [dataset.pk, reviewer.pk],
        )
        cursor.execute(
            "UPDATE review_slot SET reviewer_id = NULL, leased_at = NULL, done = false, "
            "lease_expires_at = '2000-01-01' WHERE dataset_id = %s AND reviewer_id = ANY(%s)",
            [dataset.pk, [reviewer.pk, *others]],
        )
        cursor.execute(
            "UPDATE annotation_sample SET status = 'pending_review' WHERE dataset_id = %s "
            "AND status <> 'pending_review'",
            [dataset.pk],
        )
    analyze()


def _params(dataset: Any, reviewer: Any) -> dict[str, Any]:
    from django.utils import timezone

    from core.leases import DEFAULT_LEASE_SECONDS
    from review.models import ReviewSettings
    from review.queue import statements

    return statements.claim_params(
        dataset_id=dataset.pk,
        reviewer_id=reviewer.pk,
        lead=False,
        now=timezone.now(),
        default_lease_seconds=DEFAULT_LEASE_SECONDS,
        default_gold_rate=ReviewSettings.DEFAULT_GOLD_RATE,
    )


def claims(dataset: Any, reviewer: Any, n: int) -> dict[str, Any]:
    """The claim statement ``n`` times, each rolled back."""
    from django.db import connection, transaction

    from review.queue import statements

    times = []
    for _ in range(n):
        with transaction.atomic(), connection.cursor() as cursor:
            started = time.perf_counter()
            cursor.execute(statements.CLAIM, _params(dataset, reviewer))
            row = cursor.fetchone()
            times.append(time.perf_counter() - started)
            assert row is not None
            transaction.set_rollback(True)
    return p50_p95(times)


def plan(dataset: Any, reviewer: Any) -> dict[str, Any]:
    """One claim's EXPLAIN ANALYZE (rolled back): execution ms, rows the plan threw away."""
    from django.db import connection, transaction

    from review.queue import statements

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (ANALYZE, FORMAT TEXT) " + statements.CLAIM, _params(dataset, reviewer)
        )
        lines = [line for (line,) in cursor.fetchall()]
        transaction.set_rollback(True)
    removed = sum(int(n) for n in re.findall(r"Rows Removed by [^:]+: (\d+)", "\n".join(lines)))
    execution = next(line for line in lines if line.startswith("Execution Time"))
    return {
        "execution_ms": float(execution.split(":")[1].split()[0]),
        "rows_removed": removed,
        "text": lines,
    }


def assigned(dataset: Any, n: int, n_claims: int) -> dict[str, Any]:
    """The claim of an assignee of the first ``n`` samples in claim order, and of another
    reviewer, who may take none of them."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotation import services
    from core import roles
    from tests.annotation.factories import UserFactory

    names = ("claim-scale-assignee", "claim-scale-other")
    get_user_model().objects.filter(username__in=names).delete()
    assignee, other = (UserFactory.create(username=name, role=roles.ANNOTATOR) for name in names)
    for user in (assignee, other):
        services.dataset_add_member(dataset=dataset, user=user, roles={roles.ANNOTATOR})
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH chosen AS (
                SELECT sl.sample_id FROM review_slot sl
                WHERE sl.dataset_id = %(ds)s AND sl.position = 0 AND NOT sl.done
                ORDER BY sl.judges_disagree DESC, sl.priority DESC, sl.sample_id
                LIMIT %(n)s
            ), made AS (
                INSERT INTO review_assignment (dataset_id, sample_id, reviewer_id, open, created_at)
                SELECT %(ds)s, c.sample_id, %(me)s, true, now() FROM chosen c
                RETURNING sample_id
            )
            UPDATE review_slot sl SET reserved = true
            FROM made WHERE sl.sample_id = made.sample_id AND NOT sl.done
            """,
            {"ds": dataset.pk, "n": n, "me": assignee.pk},
        )
    analyze()
    try:
        return {
            "assignee": claims(dataset, assignee, n_claims),
            "other": claims(dataset, other, n_claims),
        }
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM review_assignment WHERE dataset_id = %s", [dataset.pk])
            cursor.execute(
                "UPDATE review_slot SET reserved = false WHERE dataset_id = %s AND reserved",
                [dataset.pk],
            )
        assignee.delete()
        other.delete()
        analyze()


def child(args: argparse.Namespace) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    size = args.size
    figures: dict[str, Any] = {"size": size}
    dataset = built(size) if args.reuse else None
    if dataset is None:
        dataset, figures["build_s"] = build(size)
    analyze(everything=True)
    histories = sorted({min(int(h), size) for h in args.histories.split(",")})
    kept = sorted({min(int(h), size) for h in args.kept_up.split(",") if h})
    for name, history in [("reviews", h) for h in histories] + [("kept", h) for h in kept]:
        reviewer = reviewer_with_history(dataset, history, kept_up=name == "kept")
        try:
            figures[f"{name}_{history}"] = {
                "claim": claims(dataset, reviewer, args.claims),
                "plan": plan(dataset, reviewer),
                "loop": review_loop(dataset, reviewer, args.loops),
            }
        finally:
            forget(dataset, reviewer)
            get_user_model().objects.filter(username=f"{reviewer.username}-other").delete()
            reviewer.delete()
    if args.assigned:
        n = min(args.assigned, size)
        figures[f"assigned_{n}"] = assigned(dataset, n, args.claims)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="41883,1000000")
    parser.add_argument("--reuse", action="store_true", help="keep a dataset built earlier")
    parser.add_argument("--histories", default="0,1000,10000")
    parser.add_argument("--kept-up", default="", help="histories the others kept up with")
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--loops", type=int, default=100)
    parser.add_argument("--db-prefix", default="bench_claim_scale")
    parser.add_argument("--plans", action="store_true", help="print each claim's plan (stderr)")
    parser.add_argument(
        "--assigned", type=int, default=0, help="also time claims with this many samples assigned"
    )
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.size is not None:
        os.environ.setdefault("CONN_MAX_AGE", "600")  # prepared statements, as in production
        setup_django(args.db_prefix, args.size, ROOT / "var" / "bench-claim-scale")
        print(json.dumps(child(args)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    if not args.reuse:
        make_databases(args.db_prefix, sizes)
    results = []
    for size in sizes:
        command = [sys.executable, __file__, "--size", str(size), "--db-prefix", args.db_prefix]
        command += ["--histories", args.histories, "--claims", str(args.claims)]
        command += ["--kept-up", args.kept_up]
        command += ["--loops", str(args.loops), "--assigned", str(args.assigned)]
        command += ["--reuse"] if args.reuse else []
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"size {size} failed:\n{done.stderr[-4000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        for key, value in result.items():
            if key.startswith(("reviews_", "kept_")):
                text = value["plan"].pop("text")
                if args.plans:
                    print(f"--- {size} samples, {key}", *text, sep="\n", file=sys.stderr)
        results.append(result)
    print(json.dumps({"sizes": results}))


if __name__ == "__main__":
    main()
