"""Benchmark: the sample list page (the data manager) of a 41,883-sample dataset with every
filter alone and every two filters together, as a lead requests it.

It builds (or, with ``--reuse``, keeps) the dataset on a PostgreSQL database of its own
(``--db``, default ``bench_data_manager`` on the server of DATABASE_URL) with the helpers of
bench_scale.py: the samples through the real import path, 3 models' responses to every sample
(the third model's to half of them) and 3 judges' scoring verdicts on each, one judge's
answerability verdict (answerable, unanswerable or an abstention) on four samples in five with
the judges' flag set from them, every sample sent to review and one review on a tenth (accepts,
corrections and rejections), skips, 500 gold items, and creation and change dates spread over
90 days; then ``VACUUM ANALYZE`` (this machine's PostgreSQL runs without autovacuum).

It then requests the page through the Django test client in a lead's session: unfiltered, with
each filter of ``FILTERS`` and with every pair of them (p50 and p95 over ``--gets`` requests
after one warm-up, and the SQL query count of the last), and prints one JSON object on its last
line: the figures by filter (pairs as ``a+b``), the slowest p95, and how many exceed the goal of
150 ms (``over_goal``).

Run: .venv/bin/python bench/bench_data_manager.py [--samples 41883] [--gets 10] [--reuse]
     [--db bench_data_manager] [--var var/bench-data-manager] [--no-pairs]
(--no-pairs measures the single filters only; --reuse keeps a database built before.)
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GOAL_MS = 150.0
GOLD_ITEMS = 500
DATASET = "bench-scale"  # bench_scale.py's name, so that its helpers find it


def filters(size: int) -> dict[str, dict[str, str]]:
    """One representative value of each filter of the sample list (score and date ranges
    count as one filter each, with both bounds)."""
    today = datetime.date.today()
    return {
        "search": {"search": "sign 4242"},
        "status": {"status": "pending_review"},
        "category": {"category": "VFP"},
        "question_format": {"question_format": "yesno"},
        "scenario": {"scenario": "math"},
        "external_id": {"external_id": f"q{size // 2}"},
        "judges_disagree": {"judges_disagree": "true"},
        "judges_agree": {"judges_disagree": "false"},
        "reviewer": {"reviewer": "scale-veteran"},
        "decision": {"decision": "reject"},
        "changed": {"changed": "true"},
        "duplicates": {"duplicates": "true"},
        "gold": {"gold": "true"},
        "has_response": {"has_response": "true"},
        "response_model": {"response_model": "model-c"},
        "verdict": {"verdict": "unanswerable"},
        "score": {"score_min": "0.5", "score_max": "0.75"},
        "created": {
            "created_after": str(today - datetime.timedelta(days=60)),
            "created_before": str(today - datetime.timedelta(days=30)),
        },
        "updated": {"updated_after": str(today - datetime.timedelta(days=7))},
    }


def shape(dataset: Any, people: dict[str, Any]) -> dict[str, Any]:
    """What bench_scale.py's build leaves out: varied formats and scenarios, answerability
    verdicts and the judges' flag, decisions other than accept, skips, gold items, dates."""
    from django.db import connection

    from judging.models import Judge

    started = time.perf_counter()
    ds = dataset.pk
    judge_ids = list(
        Judge.objects.filter(name__startswith="scale-judge-")
        .order_by("name")
        .values_list("pk", flat=True)
    )
    annotators = [people[f"annotator-{n}"].pk for n in range(8)]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE annotation_sample
            SET question_format = (ARRAY['mcq', 'yesno', 'vqa'])[1 + id %% 3],
                scenario = (ARRAY['coarse_perception', 'fine_grained_perception',
                    'instance_reasoning', 'logical_reasoning', 'math',
                    'science_and_technology'])[1 + id %% 6],
                created_at = now() - (id %% 90) * interval '1 day',
                updated_at = now() - (id %% 97) * interval '1 day'
            WHERE dataset_id = %(ds)s
            """,
            {"ds": ds},
        )
        cursor.execute(
            """
            WITH gone AS (
                SELECT id FROM judging_modelresponse
                WHERE dataset_id = %(ds)s AND model_name = 'model-c' AND sample_id %% 2 = 0
            ), verdicts AS (
                DELETE FROM judging_verdict WHERE response_id IN (SELECT id FROM gone)
            )
            DELETE FROM judging_modelresponse WHERE id IN (SELECT id FROM gone)
            """,
            {"ds": ds},
        )
        cursor.execute(
            """
            INSERT INTO judging_verdict
                (judge_id, task, prompt_version, repeat, sample_id, response_id, source, label,
                 category, rationale, attempts, error_kind, error, created_at)
            SELECT %(judge)s, 'answerability', 'v1', 0, s.id, NULL, 'import',
                   (ARRAY['unanswerable', 'unanswerable', 'unanswerable', 'answerable',
                          'abstain'])[1 + s.id %% 5],
                   '', '', 1, '', '', now()
            FROM annotation_sample s
            WHERE s.dataset_id = %(ds)s AND s.id %% 5 <> 0
            """,
            {"ds": ds, "judge": judge_ids[0]},
        )
        cursor.execute(
            """
            UPDATE annotation_sample s
            SET judges_disagree = (s.id %% 5 = 3)
            WHERE s.dataset_id = %(ds)s AND s.id %% 5 NOT IN (0, 4)
            """,
            {"ds": ds},
        )
        cursor.execute(
            """
            UPDATE review_review
            SET decision = CASE WHEN id %% 5 = 0 THEN 'reject' ELSE 'accept' END,
                reject_reason = CASE WHEN id %% 5 = 0 THEN 'invalid' ELSE '' END,
                "values" = CASE WHEN id %% 5 = 1 THEN '{"reference_answer": "C"}'::jsonb
                                ELSE '{}'::jsonb END
            WHERE dataset_id = %(ds)s
            """,
            {"ds": ds},
        )
        cursor.execute(
            """
            INSERT INTO review_skip (sample_id, dataset_id, reviewer_id, reason, gold, created_at)
            SELECT s.id, s.dataset_id, (%(others)s::bigint[])[1 + s.id %% 8], 'unclear', false,
                   now()
            FROM annotation_sample s
            WHERE s.dataset_id = %(ds)s AND s.id %% 50 = 7
            """,
            {"ds": ds, "others": annotators},
        )
        cursor.execute(
            """
            INSERT INTO review_golditem
                (sample_id, dataset_id, expected, explanation, attention_check, created_at)
            SELECT s.id, s.dataset_id, '{"decision": "accept"}'::jsonb, '', false, now()
            FROM annotation_sample s
            WHERE s.dataset_id = %(ds)s
            ORDER BY s.id DESC LIMIT %(n)s
            """,
            {"ds": ds, "n": GOLD_ITEMS},
        )
    return {"shape_s": round(time.perf_counter() - started, 1)}


def vacuum() -> None:
    """This machine's PostgreSQL runs without autovacuum: fresh statistics and visibility."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in (
            "annotation_sample",
            "judging_modelresponse",
            "judging_verdict",
            "review_review",
            "review_skip",
            "review_slot",
            "review_golditem",
            "annotation_duplicatepair",
        ):
            cursor.execute(f"VACUUM ANALYZE {table}")


def build(size: int, workdir: Path) -> tuple[Any, dict[str, Any]]:
    from django.core.management import call_command

    from annotation.imports import services as import_services
    from annotation.models import Dataset
    from bench import bench_scale

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    started = time.perf_counter()
    Dataset.objects.filter(name=DATASET).delete()
    dataset = import_services.import_dataset_get_or_create(
        name=DATASET, format="mmooc", preset="mmooc"
    )
    out: dict[str, Any] = {}
    out["import"] = bench_scale.import_file(
        dataset, bench_scale.write_rows(workdir / "build.jsonl", 0, size)
    )
    people = bench_scale.make_people(dataset)
    out |= bench_scale.seed_judging(dataset)
    out |= bench_scale.seed_review(dataset, people)
    out |= shape(dataset, people)
    out["build_s"] = round(time.perf_counter() - started, 1)
    return dataset, out


def measure(dataset: Any, lead: Any, gets: int, pairs: bool) -> dict[str, Any]:
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Sample
    from bench.bench_scale import timed_gets

    client = Client()
    client.force_login(lead)
    url = reverse("annotation:sample_list", args=[dataset.pk])
    chosen = filters(Sample.objects.filter(dataset=dataset).count())
    out: dict[str, Any] = {"none": timed_gets(client, url, gets)}
    for name, params in chosen.items():
        out[name] = timed_gets(client, url, gets, **params)
    if pairs:
        for (a, pa), (b, pb) in itertools.combinations(chosen.items(), 2):
            if pa.keys() & pb.keys():
                continue  # two values of one parameter: not a combination the form makes
            out[f"{a}+{b}"] = timed_gets(client, url, gets, **pa, **pb)
    return out


def child(args: argparse.Namespace) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    from bench import bench_scale

    workdir = Path(args.var).resolve()
    figures: dict[str, Any] = {"samples": args.samples, "load_average_before": os.getloadavg()}
    dataset = bench_scale.built(args.samples) if args.reuse else None
    if dataset is None:
        dataset, figures["build"] = build(args.samples, workdir)
    vacuum()
    lead = get_user_model().objects.get(username="scale-lead")
    pages = measure(dataset, lead, args.gets, args.pairs)
    slowest = max(pages, key=lambda name: pages[name]["p95_ms"])
    figures |= {
        "pages": pages,
        "measured": len(pages),
        "slowest": {"name": slowest, **pages[slowest]},
        "over_goal": sorted(name for name, page in pages.items() if page["p95_ms"] > GOAL_MS),
        "goal_ms": GOAL_MS,
        "load_average_after": os.getloadavg(),
    }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=41_883)
    parser.add_argument("--gets", type=int, default=10)
    parser.add_argument("--reuse", action="store_true", help="keep a dataset built earlier")
    parser.add_argument("--db", default="bench_data_manager")
    parser.add_argument("--var", default=str(ROOT / "var" / "bench-data-manager"))
    parser.add_argument("--no-pairs", dest="pairs", action="store_false")
    args = parser.parse_args()
    from bench.bench_scale import server_url
    from bench.support import ensure_database, make_database

    workdir = Path(args.var).resolve()
    if not args.reuse:  # a fresh database, and media of its own beside it
        shutil.rmtree(workdir, ignore_errors=True)
        make_database(f"{server_url()}/postgres", args.db)
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ["DATABASE_URL"] = f"{server_url()}/{args.db}"
    ensure_database(os.environ["DATABASE_URL"])
    _setup(workdir)
    print(json.dumps(child(args)))


def _setup(workdir: Path) -> None:
    """Django as bench_scale.py's children run it (production settings, no worker)."""
    from bench.bench_scale import production_environ

    production_environ(workdir)
    import django

    django.setup()


if __name__ == "__main__":
    main()
