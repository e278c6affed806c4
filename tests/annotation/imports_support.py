"""What the import tests share: small, real inputs of each format (the builders), running an
import job, and the checks that nothing was left half done."""

from __future__ import annotations

import base64
import json
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.formats.jsonl import write_jsonl
from annotation.formats.records import MediaRef, ParsedSample
from annotation.imports import services as import_services
from annotation.models import (
    Dataset,
    ImportJob,
    ImportSourceKind,
    MediaAsset,
    Sample,
)
from tests.annotation.factories import png_bytes, wav_bytes
from tests.annotation.formats.test_vlmevalkit import HEADER as TSV_HEADER
from tests.annotation.formats.test_vlmevalkit import write_tsv
from tests.conftest import SHARED_DATA

LOGICVISTA = SHARED_DATA / "logicvista"
needs_logicvista = pytest.mark.skipif(not LOGICVISTA.exists(), reason="no shared LogicVista data")


# -- builders ---------------------------------------------------------------------------------


def logicvista_subset(folder: Path, ids: list[str]) -> Path:
    """A LogicVista folder holding only the named real items and their images."""
    items = json.loads((LOGICVISTA / "dataset.json").read_text(encoding="utf-8"))
    chosen = {key: items[key] for key in ids}
    (folder / "images").mkdir(parents=True, exist_ok=True)
    for item in chosen.values():
        name = item["imagename"]
        (folder / "images" / name).write_bytes((LOGICVISTA / "images" / name).read_bytes())
    (folder / "dataset.json").write_text(json.dumps(chosen), encoding="utf-8")
    return folder


def logicvista_image(name: str) -> bytes:
    """The bytes of one of LogicVista's real images."""
    return (LOGICVISTA / "images" / name).read_bytes()


def colour(n: int) -> tuple[int, int, int]:
    return (n * 37 % 256, n * 91 % 256, 120)


def image(n: int) -> bytes:
    return png_bytes(width=8, height=6, colour=colour(n))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def mmooc_record(n: int, **overrides: Any) -> dict[str, Any]:
    """An out-of-context multiple-choice MMOOC record with its own image."""
    record: dict[str, Any] = {
        "question_id": f"mm-{n}",
        "image": b64(image(n)),
        "question": f"What is written on sign {n}? (A) Stop (B) Go (C) none of the above",
        "answer": "C",
        "reasoning": "The sign is turned away from the camera.",
        "question_type": "mcq",
        "ooc_type": "visual_false_premises",
        "category": "coarse_perception",
    }
    record.update(overrides)
    return record


def write_lines(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def trimodal_record(n: int, **overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": f"tri-{n}",
        "image": f"media/scene-{n}.png",
        "audio": f"media/sound-{n}.wav",
        "T_I": "A kitchen with a pan on the stove.",
        "T_A": "Sizzling, followed by a smoke alarm.",
        "S": "I'll go take a nap now.",
        "R": "unsafe" if n % 2 else "safe",
        "category": "physical_harm",
        "subcategory": "bodily_injury",
        "L": "IF pan on stove AND smoke alarm THEN UNSAFE",
        "pair_id": f"tri-{n + 1 if n % 2 else n - 1}",
    }
    record.update(overrides)
    return record


@dataclass
class Corpus:
    """A folder holding one format's dataset file and its media, and what importing it gives."""

    format: str
    preset: str
    folder: Path
    rows: int


def build_mmooc(folder: Path) -> Corpus:
    write_lines(folder / "mmooc.jsonl", [mmooc_record(n) for n in range(1, 4)])
    return Corpus("mmooc", "mmooc", folder, 3)


def build_vlmevalkit(folder: Path) -> Corpus:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        ["1", b64(image(1)), "Which shape is red?", "", "Circle", "Square", "", "", "A", "shapes"],
        ["2", "1", "Which shape is largest?", "", "Circle", "Square", "Star", "", "B", "shapes"],
        ["3", b64(image(3)), "Which is blue?", "hint", "Sky", "Grass", "", "", "A", "colours"],
    ]
    write_tsv(folder / "mmt.tsv", TSV_HEADER, [[*row, "l2", "dev"] for row in rows])
    return Corpus("vlmevalkit", "mmt_bench", folder, 3)


def build_trimodal(folder: Path) -> Corpus:
    (folder / "media").mkdir(parents=True, exist_ok=True)
    for n in (1, 2):
        (folder / "media" / f"scene-{n}.png").write_bytes(image(n))
        (folder / "media" / f"sound-{n}.wav").write_bytes(wav_bytes(seconds=0.5, freq=300.0 * n))
    write_lines(folder / "scenarios.jsonl", [trimodal_record(1), trimodal_record(2)])
    return Corpus("trimodal", "mcbench", folder, 2)


def build_logicvista(folder: Path) -> Corpus:
    (folder / "images").mkdir(parents=True, exist_ok=True)
    items = {}
    for n in (1, 2, 3):
        (folder / "images" / f"lv{n}.png").write_bytes(image(n))
        items[f"lv{n}"] = {
            "imagename": f"lv{n}.png",
            "question": "Which comes next? Choose from (A) 1 (B) 2 (C) 3",
            "answer": "B",
            "reasoning": "It counts up.",
            "skill": ["inductive"],
        }
    (folder / "dataset.json").write_text(json.dumps(items), encoding="utf-8")
    return Corpus("logicvista", "", folder, 3)


def yes_no_sample(n: int, external_id: str, **fields: Any) -> ParsedSample:
    """A yes/no MMOOC question (answer "no") with the n-th test image, as a reader yields it."""
    return ParsedSample(
        row=0,
        external_id=external_id,
        question="Is there a dog?",
        question_format="yesno",
        reference_answer="no",
        answerability_group="shifted_ic",
        category_code="MP",
        scenario="fine_grained_perception",
        pipeline="human_designed",
        media=[MediaRef("image", 0, data=image(n))],
        **fields,
    )


def build_jsonl(folder: Path) -> Corpus:
    folder.mkdir(parents=True, exist_ok=True)
    samples = [yes_no_sample(n, f"own-{n}") for n in (1, 2)]
    with open(folder / "export.jsonl", "w", encoding="utf-8") as handle:
        write_jsonl(samples, handle)
    return Corpus("jsonl", "mmooc", folder, 2)


BUILDERS: dict[str, Callable[[Path], Corpus]] = {
    "mmooc": build_mmooc,
    "vlmevalkit": build_vlmevalkit,
    "trimodal": build_trimodal,
    "logicvista": build_logicvista,
    "jsonl": build_jsonl,
}


def zip_folder(folder: Path, target: Path, *, top: str = "") -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, posixpath_join(top, path.relative_to(folder).as_posix()))
    return target


def posixpath_join(top: str, name: str) -> str:
    return f"{top}/{name}" if top else name


def dataset_for(fmt: str, preset: str = "", name: str = "") -> Dataset:
    return import_services.import_dataset_get_or_create(
        name=name or f"{fmt}-{Dataset.objects.count()}", format=fmt, preset=preset
    )


def import_job_of(
    dataset: Dataset,
    fmt: str,
    source: str | Path,
    *,
    kind: str = ImportSourceKind.SERVER_PATH,
    upload: Any = None,
    queue: bool = False,
    options: dict[str, str] | None = None,
) -> ImportJob:
    """A trusted import job of `source` (a server path unless `kind` says otherwise), queued
    for a worker only when `queue` is true."""
    return import_services.import_job_create(
        dataset=dataset,
        format=fmt,
        source_kind=kind,
        source=str(source),
        upload=upload,
        options=options or {},
        trusted=True,
        queue=queue,
    )


def run_import(
    dataset: Dataset,
    fmt: str,
    source: str | Path,
    *,
    kind: str = ImportSourceKind.SERVER_PATH,
    upload: Any = None,
    **options: str,
) -> ImportJob:
    job = import_job_of(dataset, fmt, source, kind=kind, upload=upload, options=options)
    finished = import_services.import_job_run(job_id=job.pk)
    assert finished is not None
    return finished


def upload_of(path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes())


def stored_files(prefix: str = "media") -> set[str]:
    """Every file under a folder of the default storage (local or S3)."""
    found: set[str] = set()
    try:
        folders, files = default_storage.listdir(prefix)
    except FileNotFoundError:
        return found
    found.update(f"{prefix}/{name}" for name in files)
    for folder in folders:
        found |= stored_files(f"{prefix}/{folder}")
    return found


def assert_nothing_half_done() -> None:
    """No sample without media, no asset without a sample, no file without an asset."""
    assert not Sample.objects.filter(media_links__isnull=True).exists()
    assert not MediaAsset.objects.filter(sample_links__isnull=True).exists()
    assert stored_files() == set(MediaAsset.objects.values_list("file", flat=True))


# -- every format, every source ----------------------------------------------------------------


def truncated_png() -> bytes:
    data = png_bytes(width=200, height=200, colour=(1, 2, 3))
    return data[: len(data) // 2]


def huge_header_png() -> bytes:
    """A PNG whose header claims 30000×30000 pixels (a decompression bomb), valid CRC."""
    data = bytearray(png_bytes(width=4, height=4))
    data[16:24] = (30000).to_bytes(4, "big") * 2
    data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")
    return bytes(data)
