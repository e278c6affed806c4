"""Benchmark: send 40,000 imported samples to review in one action, and take them down and
restore them.

Seeds its own PostgreSQL database (``bench_send_to_review`` on the local server, created and
migrated by the script; DATABASE_URL overrides) with one dataset of imported samples and one
history row each (bulk-created; no media, which the moves never read). Then times, with the
number of SQL statements each ran: ``samples_send_to_review`` (status move, one history row per
sample, and the review queue opening k = 2 slots per sample), ``samples_take_down`` (closing
those slots) and ``samples_restore``. Prints one JSON object on the last line.

Run: .venv/bin/python bench/bench_send_to_review.py [--samples 40000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/bench_send_to_review"


def _setup() -> None:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DB)
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + "x" * 32)
    os.environ.setdefault("VAR_DIR", str(ROOT / "var" / "bench"))
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings.production")
    url = os.environ["DATABASE_URL"]
    if url.startswith("postgres"):
        from bench.support import ensure_database

        ensure_database(url)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def seed(n: int) -> Any:
    from annotation.models import ChangeSource, Dataset, Sample, SampleRevision, SampleStatus

    Dataset.objects.filter(name="bench-send").delete()
    dataset = Dataset.objects.create(name="bench-send", kind="image_question")
    Sample.objects.bulk_create(
        (
            Sample(
                dataset=dataset,
                external_id=f"s{i}",
                question=f"Question {i}?",
                status=SampleStatus.IMPORTED,
            )
            for i in range(n)
        ),
        batch_size=5000,
    )
    SampleRevision.objects.bulk_create(
        (
            SampleRevision(sample_id=pk, number=1, source=ChangeSource.CREATE, after={})
            for pk in Sample.objects.filter(dataset=dataset).values_list("pk", flat=True)
        ),
        batch_size=5000,
    )
    return dataset


def timed(label: str, action: Any) -> dict[str, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        start = time.perf_counter()
        result = action()
        seconds = time.perf_counter() - start
    return {
        "action": label,
        "seconds": round(seconds, 2),
        "statements": len(captured.captured_queries),
        "changed": result.changed,
        "slots_opened": result.slots_opened,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=40_000)
    args = parser.parse_args()
    _setup()
    from annotation import services
    from annotation.models import Sample

    dataset = seed(args.samples)
    everything = Sample.objects.filter(dataset=dataset)
    runs = [
        timed(
            "send_to_review",
            lambda: services.samples_send_to_review(dataset=dataset, samples=everything, by=None),
        ),
        timed(
            "take_down",
            lambda: services.samples_take_down(
                dataset=dataset, samples=everything, by=None, reason="bench"
            ),
        ),
        timed(
            "restore",
            lambda: services.samples_restore(dataset=dataset, samples=everything, by=None),
        ),
    ]
    for run in runs:
        print(f"{run['action']:>15}: {run['seconds']:7.2f} s, {run['statements']} statements")
    print(json.dumps({"samples": args.samples, "runs": runs}))


if __name__ == "__main__":
    main()
