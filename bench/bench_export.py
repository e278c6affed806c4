"""Benchmark: export 41,883 verified samples with small images to JSONL and to Parquet.

Seeds its own PostgreSQL database (``bench_export`` on the local server, created and migrated
by the script; DATABASE_URL overrides) by bulk-creating a dataset, distinct small PNG images in
a temporary media folder, samples, media links and one history row each. Each export then runs
in a fresh child process (``snapshot_create`` + ``snapshot_build``, the code the worker runs),
which reports its wall time and its peak resident memory (ru_maxrss, the whole process:
interpreter, Django and pyarrow included). Prints one JSON object on the last line.

Run: .venv/bin/python bench/bench_export.py [--samples 41883] [--formats jsonl,parquet]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/bench_export"
DATASET = "bench-export"


def _setup(media_root: str) -> None:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DB)
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-" + "x" * 32)
    os.environ["MEDIA_ROOT"] = media_root
    os.environ["S3_BUCKET"] = ""
    os.environ.setdefault("VAR_DIR", str(ROOT / "var" / "bench"))
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings.production")
    import django

    django.setup()


def _ensure_database() -> None:
    """Create the PostgreSQL database named by DATABASE_URL if it does not exist yet."""
    url = os.environ.get("DATABASE_URL", DEFAULT_DB)
    if not url.startswith("postgres"):
        return
    from bench.support import ensure_database

    ensure_database(url)


def _png(n: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    colour = (n % 256, (n // 256) % 256, (n // 65536) % 256)
    Image.new("RGB", (32, 24), colour).save(buffer, "PNG")
    return buffer.getvalue()


def seed(n_samples: int, media_root: Path) -> float:
    """Bulk-create the dataset; returns the seconds it took (skipped when already there)."""
    from django.db import transaction
    from django.utils import timezone

    from annotation import models, services

    started = time.perf_counter()
    now = timezone.now()
    models.Dataset.objects.filter(name=DATASET).delete()
    models.MediaAsset.objects.filter(samples__isnull=True).delete()
    dataset = services.dataset_create(name=DATASET, kind="image_question", preset="mmooc")
    groups = [("ooc", "VFP"), ("ooc", "MA"), ("ooc", "USPC"), ("shifted_ic", "MP")]
    scenarios = ["coarse_perception", "fine_grained_perception", "math", "logical_reasoning"]
    batch = 2000
    for start in range(0, n_samples, batch):
        numbers = range(start, min(start + batch, n_samples))
        assets, samples = [], []
        for n in numbers:
            data = _png(n)
            sha = hashlib.sha256(data).hexdigest()
            name = f"media/image/{sha[:2]}/{sha}.png"
            path = media_root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            assets.append(
                models.MediaAsset(
                    sha256=sha,
                    kind="image",
                    file=name,
                    mime_type="image/png",
                    size_bytes=len(data),
                    width=32,
                    height=24,
                )
            )
            group, code = groups[n % len(groups)]
            values: dict[str, Any] = {
                "question": f"What colour is the car behind house {n}? (A) red (B) blue",
                "question_format": "mcq",
                "options": [{"label": "A", "text": "red"}, {"label": "B", "text": "blue"}],
                "reference_answer": "A",
                "explanation": "The image shows no car; the question assumes one.",
                "answerability_group": group,
                "category_code": code,
                "scenario": scenarios[n % len(scenarios)],
                "pipeline": "mllm_generated",
                "source_dataset": "MMOOC",
                "generator_models": ["gpt-4o"],
            }
            samples.append(
                models.Sample(
                    dataset=dataset,
                    external_id=f"q{n:06d}",
                    status=models.SampleStatus.VERIFIED,
                    content_hash=services.sample_content_hash(values, [sha]),
                    **values,
                )
            )
        with transaction.atomic():
            models.MediaAsset.objects.bulk_create(assets, batch_size=batch)
            models.Sample.objects.bulk_create(samples, batch_size=batch)
            models.SampleMedia.objects.bulk_create(
                [
                    models.SampleMedia(sample=s, asset=a, role="image", position=0)
                    for s, a in zip(samples, assets, strict=True)
                ],
                batch_size=batch,
            )
            models.SampleRevision.objects.bulk_create(
                [
                    models.SampleRevision(
                        sample=s,
                        number=1,
                        source=models.ChangeSource.IMPORT,
                        before={},
                        after={"status": "verified"},
                    )
                    for s in samples
                ],
                batch_size=batch,
            )
            models.SampleNote.objects.bulk_create(
                [
                    models.SampleNote(
                        sample=s,
                        key=models.NoteKey.REVIEW_SUMMARY,
                        value={"reviewers": ["a", "b"], "agreement": 1.0},
                        updated_at=now,
                    )
                    for s in samples
                ],
                batch_size=batch,
            )
    return time.perf_counter() - started


def export_child(fmt: str, name: str) -> None:
    """Run one export in this (fresh) process and print its figures as JSON."""
    from annotation.models import Dataset
    from annotation.snapshots import services as snapshot_services

    baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    dataset = Dataset.objects.get(name=DATASET)
    started = time.perf_counter()
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name=name, format=fmt, queue=False
    )
    built = snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    seconds = time.perf_counter() - started
    assert built is not None and built.status == "succeeded", built and built.message
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "samples": built.done,
                "seconds": round(seconds, 2),
                "peak_rss_mb": round(peak_kb / 1024, 1),
                "rss_before_export_mb": round(baseline_kb / 1024, 1),
                "bytes": built.manifest["artifact"]["bytes"],
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=41_883)
    parser.add_argument("--formats", default="jsonl,parquet")
    parser.add_argument("--child", nargs=3, metavar=("FORMAT", "NAME", "MEDIA_ROOT"))
    args = parser.parse_args()
    if args.child:
        fmt, name, media_root = args.child
        _setup(media_root)
        export_child(fmt, name)
        return
    _ensure_database()
    with tempfile.TemporaryDirectory(prefix="bench-export-") as media_root:
        _setup(media_root)
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        seed_seconds = seed(args.samples, Path(media_root))
        results: dict[str, Any] = {
            "samples": args.samples,
            "seed_seconds": round(seed_seconds, 1),
            "database": os.environ["DATABASE_URL"].rsplit("@", 1)[-1],
        }
        for fmt in args.formats.split(","):
            child = subprocess.run(
                [sys.executable, __file__, "--child", fmt, f"bench-{fmt}", media_root],
                capture_output=True,
                text=True,
                check=False,
                env=os.environ.copy(),
            )
            if child.returncode != 0:
                sys.stderr.write(child.stderr)
                raise SystemExit(f"the {fmt} export failed")
            results[fmt] = json.loads(child.stdout.strip().splitlines()[-1])
        print(json.dumps(results))


if __name__ == "__main__":
    main()
