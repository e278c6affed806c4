"""Benchmark: import an lmms-eval --log_samples log and a VLMEvalKit xlsx (with its evaluated
file) of the MMOOC benchmark's size as upload jobs, through the real services: responses and
the harness's metrics as verdicts (two metrics per lmms-eval row, one per VLMEvalKit row).

Files are written as the harnesses write them (tests/support/harness_files.py). The upload
request (storing, inspecting the layout and the match preview) and the worker's job are timed
apart. The database (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/bench_harness)
is created and migrated when missing, and vacuumed first. Prints one JSON object on its last
line.

Run: .venv/bin/python bench/bench_harness_import.py [--samples 41883]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_import import ensure_database, setup_django  # noqa: E402

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_harness")


def _zip(root: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return buffer.getvalue()


def run(samples: int) -> dict[str, object]:
    ensure_database()
    with tempfile.TemporaryDirectory(prefix="bench-harness-") as name:
        workdir = Path(name)
        setup_django(workdir)
        from django.core.files.uploadedfile import SimpleUploadedFile
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", verbosity=0)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        from annotation.models import Dataset, DatasetKind, Sample
        from annotation.services.datasets import dataset_create
        from judging.imports import services
        from judging.models import ModelResponse, Verdict
        from tests.support.harness_files import (
            LmmsDoc,
            LmmsTask,
            vlmevalkit_run_folder,
            write_lmms_eval_log,
            write_vlmevalkit_evaluated,
            write_vlmevalkit_predictions,
        )

        Dataset.objects.filter(name="bench-harness").delete()
        dataset = dataset_create(name="bench-harness", kind=DatasetKind.IMAGE_QUESTION)
        Sample.objects.bulk_create(
            (
                Sample(
                    dataset=dataset,
                    external_id=str(i),
                    question=f"Question {i}?",
                    reference_answer="A" if i % 2 else "I can't answer",
                )
                for i in range(samples)
            ),
            batch_size=5000,
        )
        lmms = workdir / "lmms"
        docs = [
            LmmsDoc(
                doc={"question_id": str(i), "question": f"Question {i}?"},
                target="A" if i % 2 else "I can't answer",
                reply=f"The answer is {'A' if i % 3 else 'B'}.",
                metrics={
                    "mmooc_score": {"answer_score": i % 3 and 1, "reasoning_score": 0.5},
                    "exact_match": float(bool(i % 3)),
                },
            )
            for i in range(samples)
        ]
        started = time.perf_counter()
        write_lmms_eval_log(
            lmms,
            model="qwen2_5_vl",
            model_args="pretrained=Qwen/Qwen2.5-VL-7B-Instruct",
            tasks=[
                LmmsTask(
                    name="mmooc",
                    docs=docs,
                    metric_list=[
                        {"metric": "mmooc_score", "aggregation": "mean"},
                        {"metric": "exact_match", "aggregation": "mean"},
                    ],
                )
            ],
        )
        vlm = workdir / "vlm"
        folder = vlmevalkit_run_folder(vlm, "InternVL3-8B")
        prediction = write_vlmevalkit_predictions(
            folder,
            model="InternVL3-8B",
            dataset="MMOOC",
            rows=[
                {"index": i, "question": f"Question {i}?", "answer": "A"} for i in range(samples)
            ],
            predictions={i: "A" if i % 2 else "B" for i in range(samples)},
        )
        write_vlmevalkit_evaluated(
            prediction, judge="gpt4o-mini", outcomes={i: ("A", i % 2) for i in range(samples)}
        )
        write_s = time.perf_counter() - started
        result: dict[str, object] = {"samples": samples, "write_files_s": round(write_s, 1)}
        for label, root, doc_order in (
            ("lmms_eval", lmms, "position"),
            ("vlmevalkit", vlm, ""),
        ):
            data = _zip(root)
            started = time.perf_counter()
            job = services.response_upload_create(
                dataset=dataset,
                format="auto",
                upload=SimpleUploadedFile(f"{label}.zip", data),
                doc_order=doc_order,
            )
            request_s = time.perf_counter() - started
            started = time.perf_counter()
            done = services.judging_import_job_run(job_id=job.pk)
            worker_s = time.perf_counter() - started
            assert done is not None and done.status == "succeeded", done and done.message
            result[label] = {
                "zip_mb": round(len(data) / 1e6, 1),
                "rows": done.rows_done,
                "request_s": round(request_s, 2),
                "worker_s": round(worker_s, 1),
                "rows_per_s": round(done.rows_done / worker_s),
            }
        result["responses"] = ModelResponse.objects.filter(dataset=dataset).count()
        result["verdicts"] = Verdict.objects.filter(sample__dataset=dataset).count()
        Dataset.objects.filter(pk=dataset.pk).delete()
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=41_883)
    args = parser.parse_args()
    print(json.dumps(run(args.samples)))


if __name__ == "__main__":
    main()
