"""Benchmark: upload a 320,000-line file of model responses (about 16 MB: 40,000 samples x 8
models) and import it as a background job through the real services.

The request's part (storing the upload and recording the job) and the worker's part (the
chunked import) are timed apart, with the worker's peak RSS. The database (DATABASE_URL,
default postgres://postgres@127.0.0.1:5432/bench_responses) is created and migrated when
missing. Prints one JSON object on its last line.

Run: .venv/bin/python bench/bench_response_import.py [--samples 40000] [--models 8]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_import import ensure_database, setup_django  # noqa: E402

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_responses")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=40_000)
    parser.add_argument("--models", type=int, default=8)
    args = parser.parse_args()
    ensure_database()
    with tempfile.TemporaryDirectory(prefix="bench-responses-") as name:
        workdir = Path(name)
        setup_django(workdir)
        from django.core.files import File
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from annotation.models import Dataset, DatasetKind, Sample
        from annotation.services.datasets import dataset_create
        from judging.imports import services
        from judging.models import ModelResponse

        Dataset.objects.filter(name="bench-responses").delete()
        dataset = dataset_create(name="bench-responses", kind=DatasetKind.IMAGE_QUESTION)
        Sample.objects.bulk_create(
            (
                Sample(
                    dataset=dataset,
                    external_id=f"s{i}",
                    question=f"Question {i}?",
                    reference_answer="A",
                )
                for i in range(args.samples)
            ),
            batch_size=5000,
        )
        path = workdir / "responses.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for m in range(args.models):
                for i in range(args.samples):
                    line = {"id": f"s{i}", "model": f"model-{m}", "response": f"The answer is {i}"}
                    out.write(json.dumps(line) + "\n")
        lines = args.samples * args.models

        started = time.perf_counter()
        with path.open("rb") as handle:
            job = services.response_upload_create(
                dataset=dataset, format="jsonl", upload=File(handle, name="responses.jsonl")
            )
        request_s = time.perf_counter() - started

        started = time.perf_counter()
        done = services.judging_import_job_run(job_id=job.pk)
        worker_s = time.perf_counter() - started
        assert done is not None and done.imported == lines, done and done.message
        assert ModelResponse.objects.filter(dataset=dataset).count() == lines
        result = {
            "lines": lines,
            "file_mb": round(path.stat().st_size / 1e6, 1),
            "request_s": round(request_s, 2),
            "worker_s": round(worker_s, 1),
            "rows_per_s": round(lines / worker_s),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "status": done.status,
        }
        Dataset.objects.filter(pk=dataset.pk).delete()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
