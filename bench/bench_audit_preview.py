"""Benchmark: the audit planner's preview at MMOOC's full scale.

Seeds its own PostgreSQL database (``bench_audit_preview`` on the local server, created and
migrated by the script; DATABASE_URL overrides) with one MMOOC dataset of 41,883 samples
(8 categories × 3 formats), 18 models' responses to each (753,894, 8 % refusals) and 3 judges'
scoring verdicts on each response (2,261,682), the responses and verdicts built by
``INSERT … SELECT`` over ``generate_series`` in the server. Then times:

- ``frame_strata_s``: the worker's count of the frame's strata (``frame_strata``, the same
  frame the draw reads), stored in the computation row; done after every judge job or import;
- ``aggregate_sql_s``: for comparison, the strata sizes by one aggregate SQL query (sizes
  only, no refusal or disagreement counts);
- ``preview_get_*``: the planner's preview, ``GET /datasets/{id}/audits/new/?…`` through the
  Django test client (session, roles, stored strata, margins of the three allocations,
  warnings, template), N times, with its SQL query count.

With ``--statistics``, also draws a 2,000-item audit, rates every item (bulk insert) and times
the worker's computation of its figures (2,000 replicates; the PPI-corrected scores read every
verdict of the dataset). ``--reuse`` keeps a dataset seeded by an earlier run.

Prints one JSON object on the last line.

Run: .venv/bin/python bench/bench_audit_preview.py [--samples 41883] [--models 18] [--gets 20]
     [--reuse] [--statistics]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/bench_audit_preview"
CATEGORIES = ("MP", "VFP", "OCR", "CNT", "SPA", "ATT", "REL", "SCN")
FORMATS = ("mcq", "open", "yes_no")


def _setup() -> None:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DB)
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + "x" * 32)
    os.environ.setdefault("VAR_DIR", str(ROOT / "var" / "bench"))
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost")
    os.environ["SECURE_SSL_REDIRECT"] = "0"
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings.production")
    url = os.environ["DATABASE_URL"]
    from bench.support import ensure_database

    ensure_database(url)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)


def seed(n_samples: int, n_models: int) -> Any:
    """The dataset, its samples (bulk-created), responses and verdicts (SQL in the server)."""
    from django.db import connection

    from annotation.models import Dataset, Sample, SampleStatus
    from judging.models import Judge

    Dataset.objects.filter(name="bench-preview").delete()
    dataset = Dataset.objects.create(name="bench-preview", kind="image_question")
    Sample.objects.bulk_create(
        (
            Sample(
                dataset=dataset,
                external_id=f"s{i}",
                question=f"Question {i}: what is shown?",
                question_format=FORMATS[i % len(FORMATS)],
                reference_answer="A",
                answerability_group="shifted_ic" if i % 4 else "ooc",
                category_code=CATEGORIES[(i // 3) % len(CATEGORIES)],
                status=SampleStatus.PENDING_REVIEW,
            )
            for i in range(n_samples)
        ),
        batch_size=5000,
    )
    judges = [
        Judge.objects.get_or_create(name=f"bench-judge-{j}", defaults={"kind": "external"})[0].pk
        for j in range(3)
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO judging_modelresponse
                (dataset_id, sample_id, model_name, response, extra, created_at, updated_at)
            SELECT s.dataset_id, s.id, 'model-' || lpad(m::text, 2, '0'),
                   CASE WHEN random() < 0.08 THEN 'I cannot answer this question.'
                        ELSE 'The answer is A, because the picture shows it.' END,
                   '{}'::jsonb, now(), now()
            FROM annotation_sample s CROSS JOIN generate_series(1, %s) AS m
            WHERE s.dataset_id = %s
            """,
            [n_models, dataset.pk],
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
    return dataset


AGGREGATE = """
SELECT s.category_code, s.question_format, r.model_name, count(*)
FROM judging_modelresponse r JOIN annotation_sample s ON s.id = r.sample_id
WHERE r.dataset_id = %s AND EXISTS (
    SELECT 1 FROM judging_verdict v
    WHERE v.response_id = r.id AND v.task = 'mmooc_scoring' AND v.error_kind = ''
      AND v.answer_score IS NOT NULL AND v.reasoning_score IS NOT NULL)
GROUP BY 1, 2, 3
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=41_883)
    parser.add_argument("--models", type=int, default=18)
    parser.add_argument("--gets", type=int, default=20)
    parser.add_argument("--reuse", action="store_true", help="keep the seeded dataset")
    parser.add_argument(
        "--statistics", action="store_true", help="also time a full-scale audit's figures"
    )
    args = parser.parse_args()
    _setup()
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from annotation.models import Dataset
    from judging.audit import computations
    from judging.models import ModelResponse, Verdict

    figures: dict[str, Any] = {"load_average": os.getloadavg()}
    start = time.perf_counter()
    dataset = Dataset.objects.filter(name="bench-preview").first() if args.reuse else None
    if dataset is None:
        dataset = seed(args.samples, args.models)
    figures["seed_s"] = round(time.perf_counter() - start, 1)
    figures["responses"] = ModelResponse.objects.filter(dataset=dataset).count()
    figures["verdicts"] = Verdict.objects.filter(response__dataset=dataset).count()

    start = time.perf_counter()
    row = computations.frame_strata_compute(dataset=dataset, task="scoring")
    figures["frame_strata_s"] = round(time.perf_counter() - start, 2)
    assert row is not None and row.result is not None, row and row.message
    figures["frame_size"] = row.result["frame_size"]
    figures["strata"] = len(row.result["strata"])

    with connection.cursor() as cursor:
        start = time.perf_counter()
        cursor.execute(AGGREGATE, [dataset.pk])
        sizes = cursor.fetchall()
        figures["aggregate_sql_s"] = round(time.perf_counter() - start, 2)
    assert sum(count for *_key, count in sizes) == figures["frame_size"]

    lead, _ = User.objects.get_or_create(username="bench-lead")
    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    client = Client()
    client.force_login(lead)
    url = reverse("judging:audit_new", args=[dataset.pk])
    design: dict[str, str | int] = {
        "task": "scoring",
        "size": 2000,
        "method": "sqrt",
        "floor": 5,
        "oversample_rare": 3,
        "oversample_disagree": 2,
        "seed": 0,
        "double_rating_fraction": "0.1",
    }
    assert client.get(url, design).status_code == 200  # warm: imports, templates
    times = []
    for _ in range(args.gets):
        with CaptureQueriesContext(connection) as queries:
            start = time.perf_counter()
            page = client.get(url, design)
            times.append(time.perf_counter() - start)
        assert page.status_code == 200 and b'id="allocation-table"' in page.content
    figures["preview_get_median_s"] = round(statistics.median(times), 4)
    figures["preview_get_max_s"] = round(max(times), 4)
    figures["preview_queries"] = len(queries)
    figures["goal_met"] = figures["preview_get_max_s"] < 1.0
    if args.statistics:
        figures |= statistics_at_scale(dataset, lead)
    print(json.dumps(figures))


def statistics_at_scale(dataset: Any, lead: Any) -> dict[str, Any]:
    """What a worker spends on an audit's figures at full scale: a 2,000-item scoring audit
    (drawn here), every item rated once (bulk insert), then the figures with 2,000 replicates,
    whose PPI-corrected scores read every judge score of the dataset."""
    import uuid

    import numpy as np

    from judging.audit import computations, services
    from judging.models import AuditItem, AuditRating, AuditSet

    AuditSet.objects.filter(dataset=dataset, name="bench").delete()
    out: dict[str, Any] = {}
    start = time.perf_counter()
    audit_set = services.audit_set_draw(
        dataset=dataset, name="bench", task="scoring", size=2000, method="sqrt", floor=5
    )
    out["draw_s"] = round(time.perf_counter() - start, 1)
    rng = np.random.default_rng(0)
    AuditRating.objects.bulk_create(
        AuditRating(
            audit_set=audit_set,
            item_id=item_id,
            auditor=lead,
            answer_score=int(rng.random() < 0.7),
            reasoning_score=float(rng.integers(0, 5)) / 4,
            submission_uuid=uuid.uuid4(),
        )
        for item_id in AuditItem.objects.filter(audit_set=audit_set).values_list("id", flat=True)
    )
    start = time.perf_counter()
    row = computations.audit_statistics_compute(audit_set=audit_set)
    out["statistics_s"] = round(time.perf_counter() - start, 1)
    assert row is not None and row.status == "succeeded", row and row.message
    assert row.result is not None
    out["statistics_models_corrected"] = len(row.result["corrected"])
    return out


if __name__ == "__main__":
    main()
