"""MMOOC's own release layout: ``data/ooc.parquet`` and ``data/ic.parquet`` with the field
names the benchmark's evaluation code reads (question_id, image, question, answer, reasoning,
question_type, ooc_type, category), plus the provenance columns. Readable back by
``annotation.formats.mmooc``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from annotation.formats.mmooc import IC_CODES, OOC_CODES
from annotation.formats.validate import OOC_GROUP, SHIFTED_IC_GROUP
from annotation.snapshots.exports.parquet import OPTION_TYPE, RowGroupWriter
from annotation.snapshots.exports.records import ExportRecord, extra_columns

OOC_FILE = "data/ooc.parquet"
IC_FILE = "data/ic.parquet"


def _names(codes: dict[str, str]) -> dict[str, str]:
    """Code -> released name; the first spelling of a code is the released one."""
    names: dict[str, str] = {}
    for name, code in codes.items():
        names.setdefault(code, name)
    return names


OOC_NAMES = _names(OOC_CODES)
IC_NAMES = _names(IC_CODES)


def _schema(type_column: str, custom: Sequence[str] = ()) -> pa.Schema:
    return pa.schema(
        [
            pa.field("question_id", pa.string()),
            pa.field("image", pa.binary()),
            pa.field("question", pa.string()),
            pa.field("answer", pa.string()),
            pa.field("reasoning", pa.string()),
            pa.field("question_type", pa.string()),
            pa.field(type_column, pa.string()),
            pa.field("category", pa.string()),
            pa.field("options", OPTION_TYPE),
            pa.field("answerability_group", pa.string()),
            pa.field("pipeline", pa.string()),
            pa.field("source_dataset", pa.string()),
            pa.field("generator_models", pa.list_(pa.string())),
            pa.field("split", pa.string()),
            pa.field("content_hash", pa.string()),
            pa.field("licence", pa.string()),
            pa.field("image_licence", pa.string()),
            pa.field("source_url", pa.string()),
            *(pa.field(key, pa.string()) for key in custom),
        ]
    )


@dataclass
class MmoocCounts:
    ooc: int = 0
    ic: int = 0
    skipped: int = 0


def _row(
    record: ExportRecord, type_column: str, type_name: str, custom: Sequence[str]
) -> tuple[dict[str, Any], int]:
    images = record.media_of("image")
    data = images[0].read() if images else None
    row = {
        "question_id": record.external_id,
        "image": data,
        "question": record.text("question"),
        "answer": record.text("reference_answer"),
        "reasoning": record.text("explanation"),
        "question_type": record.text("question_format"),
        type_column: type_name,
        "category": record.text("scenario"),
        "options": record.options(),
        "answerability_group": record.text("answerability_group"),
        "pipeline": record.text("pipeline"),
        "source_dataset": record.text("source_dataset"),
        "generator_models": record.string_list("generator_models"),
        "split": record.text("split"),
        "content_hash": record.content_hash,
        "licence": record.licence,
        "image_licence": record.licence_of("image"),
        "source_url": record.source_url,
    }
    row |= {key: record.extra_text(key) for key in custom}
    return row, len(data or b"")


def write_mmooc_layout(
    records: Iterable[ExportRecord], out_dir: Path, *, extra_keys: Sequence[str] = ()
) -> MmoocCounts:
    """Write both split files; samples in neither group are skipped and counted.

    ``extra_keys`` are the samples' custom fields, written as string columns after the
    benchmark's own (the MMOOC reader keeps such columns in ``extra``).
    """
    (out_dir / "data").mkdir(parents=True, exist_ok=True)
    taken = {*_schema("ooc_type").names, "ic_type"}
    custom = extra_columns(extra_keys, taken)
    ooc = RowGroupWriter(out_dir / OOC_FILE, _schema("ooc_type", custom))
    ic = RowGroupWriter(out_dir / IC_FILE, _schema("ic_type", custom))
    counts = MmoocCounts()
    try:
        for record in records:
            group, code = record.text("answerability_group"), record.text("category_code")
            if group == OOC_GROUP:
                row, size = _row(record, "ooc_type", OOC_NAMES.get(code, code), custom)
                ooc.add(row, size)
                counts.ooc += 1
            elif group == SHIFTED_IC_GROUP:
                row, size = _row(record, "ic_type", IC_NAMES.get(code, code), custom)
                ic.add(row, size)
                counts.ic += 1
            else:
                counts.skipped += 1
    finally:
        ooc.close()
        ic.close()
    return counts
