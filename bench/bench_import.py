"""Benchmark: import an MMOOC-scale JSON-lines file (41,883 rows, each with its own small PNG)
into PostgreSQL through the real import service, and a half-size file to show memory stays flat.

Each import runs in a fresh child process, so its peak RSS (resource.getrusage) is its own.
Media are hashed, fully decoded and stored on local disk; thumbnails are left to workers (the
broker here is in-memory, so no worker runs) and are timed separately on a sample of assets.
The database (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/bench_import) is
created and migrated when missing. Prints one JSON object on its last line.

Run: .venv/bin/python bench/bench_import.py [--rows 41883] [--derive-sample 500]
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/bench_import"


def setup_django(workdir: Path) -> None:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DB)
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + "x" * 32)
    os.environ["VAR_DIR"] = str(workdir / "var")
    os.environ["MEDIA_ROOT"] = str(workdir / "media")
    os.environ["CELERY_BROKER_URL"] = "memory://"
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"
    os.environ["DJANGO_SETTINGS_MODULE"] = "mmooc_site.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def ensure_database() -> None:
    """Create the benchmark database when it does not exist yet."""
    import psycopg

    url = os.environ.get("DATABASE_URL", DEFAULT_DB)
    base, _, name = url.rpartition("/")
    with psycopg.connect(base + "/postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def png(n: int) -> bytes:
    from PIL import Image

    pixels = random.Random(n).randbytes(24 * 24 * 3)
    buffer = io.BytesIO()
    Image.frombytes("RGB", (24, 24), pixels).save(buffer, "PNG")
    return buffer.getvalue()


def write_file(path: Path, rows: int, first: int) -> None:
    categories = ["visual_false_premises", "multimodal_ambiguity", "missing_knowledge_background"]
    with open(path, "w", encoding="utf-8") as out:
        for n in range(first, first + rows):
            record = {
                "question_id": f"q{n}",
                "image": base64.b64encode(png(n)).decode(),
                "question": f"What does sign {n} say? (A) Stop (B) Go (C) Yield (D) none",
                "answer": "D",
                "reasoning": "The sign is too blurred to read.",
                "question_type": "mcq",
                "ooc_type": categories[n % 3],
                "category": "coarse_perception",
                "pipeline": "mllm_generated",
            }
            out.write(json.dumps(record) + "\n")


def child(path: Path, dataset_name: str, derive_sample: int) -> dict[str, Any]:
    """Import one file (in this process) and measure it."""
    from annotation import services
    from annotation.imports import services as import_services
    from annotation.models import ImportSourceKind, MediaAsset

    dataset = import_services.import_dataset_get_or_create(
        name=dataset_name, format="mmooc", preset="mmooc"
    )
    job = import_services.import_job_create(
        dataset=dataset,
        format="mmooc",
        source_kind=ImportSourceKind.SERVER_PATH,
        source=str(path),
        trusted=True,
        queue=False,
    )
    started = time.perf_counter()
    finished = import_services.import_job_run(job_id=job.pk)
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert finished is not None
    assets = list(
        MediaAsset.objects.filter(sample_links__sample__dataset=dataset).values_list(
            "id", flat=True
        )[:derive_sample]
    )
    derive_started = time.perf_counter()
    for asset_id in assets:
        services.media_asset_derive(asset_id=asset_id)
    derive_ms = (time.perf_counter() - derive_started) * 1000 / max(len(assets), 1)
    return {
        "rows": finished.total_rows,
        "status": finished.status,
        "imported": finished.imported,
        "rejected": finished.rejected,
        "seconds": round(seconds, 2),
        "rows_per_s": round((finished.total_rows or 0) / seconds, 1),
        "peak_rss_mb": round(peak_kib / 1024, 1),
        "file_mb": round(path.stat().st_size / 1e6, 1),
        "thumbnail_ms_per_asset": round(derive_ms, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=41_883)
    parser.add_argument("--derive-sample", type=int, default=500)
    parser.add_argument("--child", default="")
    parser.add_argument("--dataset", default="")
    parser.add_argument("--workdir", default="")
    args = parser.parse_args()
    if args.child:
        setup_django(Path(args.workdir))
        print(json.dumps(child(Path(args.child), args.dataset, args.derive_sample)))
        return

    with tempfile.TemporaryDirectory(prefix="bench-import-") as folder:
        workdir = Path(folder)
        ensure_database()
        setup_django(workdir)
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", verbosity=0)
        with connection.cursor() as cursor:  # a clean slate: every run imports new rows
            cursor.execute(
                "TRUNCATE annotation_sample, annotation_mediaasset, annotation_importjob, "
                "annotation_dataset CASCADE"
            )
        connection.close()
        results: dict[str, Any] = {}
        # Half first, so the full run does not find its images already stored.
        for label, rows, first in (("half", args.rows // 2, 10_000_000), ("full", args.rows, 0)):
            path = workdir / f"mmooc-{label}.jsonl"
            started = time.perf_counter()
            write_file(path, rows, first)
            generated = time.perf_counter() - started
            output = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    str(path),
                    "--dataset",
                    f"bench-{label}-{int(time.time())}",
                    "--workdir",
                    folder,
                    "--derive-sample",
                    str(args.derive_sample),
                ],
                check=True,
                stdout=subprocess.PIPE,
                text=True,
            ).stdout
            results[label] = json.loads(output.strip().splitlines()[-1]) | {
                "generate_seconds": round(generated, 1)
            }
            path.unlink()
    full = results["full"]
    print(
        json.dumps(
            {
                "benchmark": "import_mmooc_jsonl",
                "rows": full["rows"],
                "seconds": full["seconds"],
                "rows_per_s": full["rows_per_s"],
                "peak_rss_mb": full["peak_rss_mb"],
                "goal_seconds": 60,
                "under_goal": full["seconds"] < 60,
                "thumbnail_ms_per_asset": full["thumbnail_ms_per_asset"],
                "full": full,
                "half": results["half"],
            }
        )
    )


if __name__ == "__main__":
    main()
