"""Benchmark: import an MMOOC-scale JSON-lines file (41,883 rows, each with its own small PNG)
into PostgreSQL through the real import service, and a half-size file to show memory stays flat.

Each import runs in a fresh child process, so its peak RSS (resource.getrusage) is its own
(the forked reader process's peak is reported beside it). Media are hashed, fully decoded and
stored on local disk. Then every derivative of the imported assets is made as a Celery worker
with ``-c 2`` makes them: the import's batches of assets, one ``media_assets_derive`` call per
batch, spread over two forked processes; timed until the last one is done. The encoding cost
of a real thumbnail is timed apart on a sample (the bench's 24×24 images are their own
thumbnail). The database (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/bench_import)
is created and migrated when missing. Prints one JSON object on its last line, with the load
average of the machine before and after.

Near-duplicate detection (perceptual hashes, question keys, the pairs an import records) is
on, as the site runs; ``--duplicates off`` turns it off through the setting
``IMPORT_FIND_DUPLICATES``, and ``--duplicates alternate`` runs off and on in turn, ``--repeat``
rounds of each, and reports each variant's medians and how much slower detection is.

Run: .venv/bin/python bench/bench_import.py [--rows 41883] [--repeat 1] [--encode-sample 300]
     [--duplicates on|off|alternate]
"""

from __future__ import annotations

import argparse
import base64
import gc
import io
import json
import multiprocessing
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
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
    os.environ["DJANGO_SETTINGS_MODULE"] = "mmooc_site.settings.production"
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


DERIVE_PROCESSES = 2  # as a Celery worker started with -c 2
DERIVE_BATCH = 500  # the import's chunk: one derive task per chunk


def _derive_batch(asset_ids: list[int]) -> int:
    from annotation.services.media import media_assets_derive

    return media_assets_derive(asset_ids=asset_ids)


def derive_all(asset_ids: list[int]) -> tuple[float, int]:
    """Make every derivative, batch by batch, in DERIVE_PROCESSES forked processes."""
    from django.db import connections

    connections.close_all()  # each forked process opens its own connection
    batches = [asset_ids[i : i + DERIVE_BATCH] for i in range(0, len(asset_ids), DERIVE_BATCH)]
    started = time.perf_counter()
    with ProcessPoolExecutor(
        DERIVE_PROCESSES, mp_context=multiprocessing.get_context("fork")
    ) as pool:
        derived = sum(pool.map(_derive_batch, batches))
    return time.perf_counter() - started, derived


def encode_ms(asset_ids: list[int]) -> float:
    """Milliseconds per asset to encode a real thumbnail (read, decode, resize, WEBP)."""
    from django.core.files.storage import default_storage

    from annotation.media_checks import make_thumbnail
    from annotation.models import MediaAsset

    names = list(MediaAsset.objects.filter(pk__in=asset_ids).values_list("file", flat=True))
    started = time.perf_counter()
    for name in names:
        with default_storage.open(name, "rb") as handle:
            make_thumbnail(handle.read())
    return (time.perf_counter() - started) * 1000 / max(len(names), 1)


def cpu_seconds(who: int, kind: str = "") -> float:
    usage = resource.getrusage(who)
    return {"user": usage.ru_utime, "system": usage.ru_stime}.get(
        kind, usage.ru_utime + usage.ru_stime
    )


def backend_cpu_seconds(pid: int) -> float:
    """CPU seconds of a PostgreSQL backend process so far (the server runs on this machine)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(path: Path, dataset_name: str, encode_sample: int) -> dict[str, Any]:
    """Import one file (in this process), then make its derivatives, and measure both."""
    from annotation.imports import services as import_services
    from annotation.models import MediaAsset
    from tests.annotation.imports_support import import_job_of

    dataset = import_services.import_dataset_get_or_create(
        name=dataset_name, format="mmooc", preset="mmooc"
    )
    job = import_job_of(dataset, "mmooc", path)
    from celery import current_app
    from django.db import connection

    # As a worker process is when it takes the job: its task modules loaded (and Celery's
    # Django fix-up's model checks run) at start-up, not by the first task the import sends.
    current_app.loader.import_default_modules()
    # ... and with that heap out of the garbage collector's reach, as the worker's main
    # process leaves it before forking each pool process (mmooc_site.celery.freeze_before_fork).
    gc.collect()
    gc.freeze()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    cpu = (
        cpu_seconds(resource.RUSAGE_SELF),
        backend_cpu_seconds(backend),
        cpu_seconds(resource.RUSAGE_SELF, "system"),
    )
    started = time.perf_counter()
    finished = import_services.import_job_run(job_id=job.pk)
    seconds = time.perf_counter() - started
    cpu_import = {
        "importing_process": round(cpu_seconds(resource.RUSAGE_SELF) - cpu[0], 2),
        "importing_process_system": round(cpu_seconds(resource.RUSAGE_SELF, "system") - cpu[2], 2),
        "reader_process": round(cpu_seconds(resource.RUSAGE_CHILDREN), 2),
        "postgres_backend": round(backend_cpu_seconds(backend) - cpu[1], 2),
    }
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reader_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert finished is not None
    assets = list(
        MediaAsset.objects.filter(sample_links__sample__dataset=dataset)
        .order_by("id")
        .values_list("id", flat=True)
    )
    derive_seconds, derived = derive_all(assets)
    underived = MediaAsset.objects.filter(pk__in=assets, derived_at__isnull=True).count()
    hashed = MediaAsset.objects.filter(pk__in=assets, phash__isnull=False).count()
    keyed = dataset.samples.filter(question_key__isnull=False).count()
    return {
        "rows": finished.total_rows,
        "status": finished.status,
        "imported": finished.imported,
        "rejected": finished.rejected,
        "seconds": round(seconds, 2),
        "cpu_seconds": cpu_import,
        "rows_per_s": round((finished.total_rows or 0) / seconds, 1),
        "peak_rss_mb": round(peak_kib / 1024, 1),
        "reader_peak_rss_mb": round(reader_kib / 1024, 1),
        "file_mb": round(path.stat().st_size / 1e6, 1),
        "assets": len(assets),
        "derived": derived,
        "underived_after": underived,
        "images_hashed": hashed,
        "questions_keyed": keyed,
        "derivatives_seconds": round(derive_seconds, 2),
        "thumbnail_encode_ms_per_asset": round(encode_ms(assets[:encode_sample]), 2),
    }


def run_child(
    folder: str, label: str, rows: int, first: int, encode_sample: int, duplicates: bool = True
) -> dict[str, Any]:
    path = Path(folder) / f"mmooc-{label}.jsonl"
    started = time.perf_counter()
    write_file(path, rows, first)
    generated = time.perf_counter() - started
    load_before = os.getloadavg()[0]
    output = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            str(path),
            "--dataset",
            f"bench-{label}-{time.time_ns()}",
            "--workdir",
            folder,
            "--encode-sample",
            str(encode_sample),
        ],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "IMPORT_FIND_DUPLICATES": "1" if duplicates else "0"},
    ).stdout
    path.unlink()
    measured: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return measured | {
        "duplicates": duplicates,
        "generate_seconds": round(generated, 1),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=41_883)
    parser.add_argument("--repeat", type=int, default=1, help="full-size runs (medians)")
    parser.add_argument("--no-half", action="store_true", help="skip the half-size run")
    parser.add_argument("--encode-sample", type=int, default=300)
    parser.add_argument(
        "--duplicates",
        choices=["on", "off", "alternate"],
        default="on",
        help="near-duplicate detection at import (IMPORT_FIND_DUPLICATES); alternate: off, "
        "then on, --repeat rounds",
    )
    parser.add_argument("--child", default="")
    parser.add_argument("--dataset", default="")
    parser.add_argument("--workdir", default="")
    args = parser.parse_args()
    if args.child:
        setup_django(Path(args.workdir))
        print(json.dumps(child(Path(args.child), args.dataset, args.encode_sample)))
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
        # Each run has images of its own, so none finds its images already stored.
        half = None
        if not args.no_half:
            half = run_child(folder, "half", args.rows // 2, 90_000_000, args.encode_sample)
        variants = {"on": [True], "off": [False], "alternate": [False, True]}[args.duplicates]
        runs = [
            run_child(
                folder,
                f"full{k}-{len(variants) * k + n}",
                args.rows,
                (len(variants) * k + n) * 100_000_000,
                args.encode_sample,
                duplicates=detect,
            )
            for k in range(args.repeat)
            for n, detect in enumerate(variants)
        ]

    def median(key: str, of: list[dict[str, Any]] | None = None) -> float:
        return round(float(statistics.median(r[key] for r in (of or runs))), 2)

    by_variant: dict[str, Any] = {}
    for name, detect in (("off", False), ("on", True)):
        chosen = [r for r in runs if r["duplicates"] is detect]
        if chosen:
            by_variant[name] = {
                "runs": len(chosen),
                "import_seconds": median("seconds", chosen),
                "import_seconds_each": [r["seconds"] for r in chosen],
                "importing_process_cpu_each": [
                    r["cpu_seconds"]["importing_process"] for r in chosen
                ],
                "reader_process_cpu_each": [r["cpu_seconds"]["reader_process"] for r in chosen],
                "postgres_backend_cpu_each": [r["cpu_seconds"]["postgres_backend"] for r in chosen],
                "load_before_each": [r["load_before"] for r in chosen],
            }
    slowdown = None
    if len(by_variant) == 2:
        off, on = by_variant["off"]["import_seconds"], by_variant["on"]["import_seconds"]
        slowdown = round(100 * (on - off) / off, 1)

    import_seconds, derivatives_seconds = median("seconds"), median("derivatives_seconds")
    print(
        json.dumps(
            {
                "benchmark": "import_mmooc_jsonl",
                "rows": runs[0]["rows"],
                "runs": len(runs),
                "import_seconds": import_seconds,
                "derivatives_seconds": derivatives_seconds,
                "rows_per_s": median("rows_per_s"),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                "reader_peak_rss_mb": max(r["reader_peak_rss_mb"] for r in runs),
                "goal_import_seconds": 15,
                "goal_derivatives_seconds": 15,
                "import_under_goal": import_seconds <= 15,
                "derivatives_under_goal": derivatives_seconds <= 15,
                "duplicates": by_variant,
                "duplicates_slowdown_percent": slowdown,
                "duplicates_within_10_percent": None if slowdown is None else slowdown <= 10,
                "full": runs,
                "half": half,
            }
        )
    )


if __name__ == "__main__":
    main()
