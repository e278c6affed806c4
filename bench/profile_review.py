"""Profile the review loop in one process: queries and CPU per claim + submit, deterministically.

Runs ``POST /api/datasets/{id}/claim/`` then ``POST /api/reviews/`` through Django's whole
request handler (middleware, token authentication, throttling, the views) with the test
client, no network and no gunicorn, on the database of ``DATABASE_URL`` (created and
migrated when missing; a dataset of its own, made on the first run and reused). Reports per
loop: the SQL statements of each call, the Python function calls (a count that does not move
with the machine's load, from a profiled run) and the CPU milliseconds of this process (from
a run without the profiler; PostgreSQL's and Redis's own time are not in it); ``--sql``
prints the statements of one loop, ``--top N`` the profile's heaviest functions (CPU time),
``--floor`` runs the floor site's two views (``bench/floor_urls.py``) instead, for
comparison, ``--statements`` the statements floor's (``bench/statements_floor.py``: the real
loop's statements alone).

Run: DATABASE_URL=postgres://…/db REDIS_URL=redis://…/1 .venv/bin/python bench/profile_review.py
     [--loops 200] [--samples 2000] [--reviewers 4] [--sql] [--top 25] [--floor | --statements]
     [--dump F]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings.production")
os.environ.setdefault("SECRET_KEY", "profile-only-" + "x" * 40)
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("ALLOWED_HOSTS", "testserver,127.0.0.1")
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")

NAME = "profile MMOOC"


def _setup(samples: int, reviewers: int) -> tuple[int, list[str]]:
    """The profile's dataset and its reviewers' tokens, made once and then reused (its queue
    reset to as built)."""
    from django.conf import settings
    from django.db import connection

    from annotation.models import Dataset
    from bench.bench_review import build
    from bench.review_db import reset_queue

    dataset = Dataset.objects.filter(name=NAME).first()
    if dataset is None:
        built = build(samples, reviewers, 2)
        Dataset.objects.filter(pk=built["dataset_id"]).update(name=NAME)
        return built["dataset_id"], built["tokens"]
    from rest_framework.authtoken.models import Token

    from tests.support.processes import database_url

    db_url = database_url(settings.DATABASES["default"])
    connection.close()
    reset_queue(db_url, dataset.pk, 2)
    tokens = list(
        Token.objects.filter(user__username__startswith="bench-")
        .order_by("user_id")
        .values_list("key", flat=True)
    )
    return dataset.pk, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--loops", type=int, default=200)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--reviewers", type=int, default=4)
    parser.add_argument("--sql", action="store_true")
    parser.add_argument("--sql-width", type=int, default=300, help="characters per statement")
    parser.add_argument("--top", type=int, default=0)
    parser.add_argument("--dump", help="write the profile to this file (for pstats)")
    parser.add_argument(
        "--floor", action="store_true", help="the floor site's loop instead (bench/floor_urls.py)"
    )
    parser.add_argument("--statements", action="store_true", help="the statements floor's loop")
    args = parser.parse_args()
    if args.floor or args.statements:
        from bench.bench_review import CLAIM_SQL

        os.environ["DJANGO_SETTINGS_MODULE"] = "bench.floor_site"
        os.environ["BENCH_CLAIM_SQL"] = CLAIM_SQL

    from bench.support import ensure_database

    ensure_database(os.environ["DATABASE_URL"])
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    call_command("migrate", "--noinput", verbosity=0)
    dataset_id, tokens = _setup(args.samples, args.reviewers)
    clients = [Client(HTTP_AUTHORIZATION=f"Token {token}") for token in tokens]
    claim_path, submit_path = f"/api/datasets/{dataset_id}/claim/", "/api/reviews/"
    if args.floor:
        reviewers = User.objects.filter(username__startswith="bench-").values_list("pk", flat=True)
        clients = [Client(HTTP_X_REVIEWER=str(pk)) for pk in reviewers]
        claim_path, submit_path = f"/floor/claim/{dataset_id}/", "/floor/submit/"
    if args.statements:
        claim_path = f"/floor/statements/claim/{dataset_id}/"
        submit_path = "/floor/statements/submit/"

    def loop(client: Client) -> tuple[list[str], list[str]]:
        with CaptureQueriesContext(connection) as claim_q:
            claimed = client.post(claim_path, {}, content_type="application/json")
        assert claimed.status_code == 200, claimed.content
        sample = json.loads(claimed.content)["sample"]["id"]
        body = {"client_uuid": str(uuid.uuid4()), "sample": sample, "decision": "accept"}
        with CaptureQueriesContext(connection) as submit_q:
            submitted = client.post(submit_path, body, content_type="application/json")
        assert submitted.status_code == 201, submitted.content
        return [q["sql"] for q in claim_q.captured_queries], [
            q["sql"] for q in submit_q.captured_queries
        ]

    for client in clients:  # warm-up: imports, URL resolver, first connections
        loop(client)
    claim_sql, submit_sql = loop(clients[0])
    settle_sql = loop(clients[1])[1]  # the second review of the sample settles it
    cpu0 = time.process_time()
    for i in range(args.loops):
        loop(clients[i % len(clients)])
    cpu = time.process_time() - cpu0
    # CPU time only: waits on the database are not counted.
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for i in range(args.loops):
        loop(clients[i % len(clients)])
    profiler.disable()
    stats = pstats.Stats(profiler)
    if args.dump:
        stats.dump_stats(args.dump)
    calls = sum(entry[1] for entry in stats.stats.values())  # type: ignore[attr-defined]
    if args.sql:
        shown = (("claim", claim_sql), ("submit", submit_sql), ("settling submit", settle_sql))
        for label, statements in shown:
            print(f"--- {label}: {len(statements)} statements")
            for sql in statements:
                print("  ", sql[: args.sql_width])
    if args.top:
        stats.sort_stats("cumulative").print_stats(args.top)
    result: dict[str, Any] = {
        "loops": args.loops,
        "claim_queries": len(claim_sql),
        "submit_queries": len(submit_sql),
        "settling_submit_queries": len(settle_sql),
        "calls_per_loop": round(calls / args.loops),
        "cpu_ms_per_loop": round(cpu * 1000 / args.loops, 2),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
