"""A folder that Hugging Face ``datasets`` loads directly: ``load_dataset("path/to/folder")``.

``data/<split>-00000-of-00001.parquet`` per split, with ``image`` (and for tri-modal data
``audio``) stored as the ``{bytes, path}`` struct of the Image and Audio features, and a
``README.md`` dataset card whose YAML front matter declares the configs, splits and features.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from annotation.snapshots.exports.parquet import (
    HF_FILE_TYPE,
    RowGroupWriter,
    label_columns,
    label_row,
)
from annotation.snapshots.exports.records import (
    OPTION_FIELD,
    STRING_LIST_FIELDS,
    ExportRecord,
)

DEFAULT_SPLIT = "train"
MORE_IMAGES = "more_images"
_SPLIT_CHARS = re.compile(r"[^\w]+")


@dataclass
class HfCard:
    """What the dataset card says besides the features."""

    title: str
    description: str = ""
    version: str = ""
    licence_note: str = ""
    extra_lines: list[str] = field(default_factory=list)


def split_name(value: str) -> str:
    """A split name ``datasets`` accepts (word characters only); empty means ``train``."""
    cleaned = _SPLIT_CHARS.sub("_", value.strip()).strip("_")
    return cleaned or DEFAULT_SPLIT


def hf_schema(*, with_audio: bool) -> pa.Schema:
    # A sample's first image is `image`; multi-image samples keep the others in order.
    fields = [
        *label_columns(),
        pa.field("image", HF_FILE_TYPE),
        pa.field(MORE_IMAGES, pa.list_(HF_FILE_TYPE)),
    ]
    if with_audio:
        fields.append(pa.field("audio", HF_FILE_TYPE))
    # The sample's custom fields (``extra``) as one JSON string: their keys vary by sample.
    fields += [
        pa.field("review", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("extra", pa.string()),
    ]
    return pa.schema(fields)


def _file_cell(record: ExportRecord, role: str) -> tuple[dict[str, Any] | None, int]:
    items = record.media_of(role)
    if not items:
        return None, 0
    data = items[0].read()
    return {"bytes": data, "path": f"{items[0].sha256}{items[0].extension}"}, len(data)


def _more_images(record: ExportRecord) -> tuple[list[dict[str, Any]], int]:
    cells, size = [], 0
    for item in record.media_of("image")[1:]:
        data = item.read()
        cells.append({"bytes": data, "path": f"{item.sha256}{item.extension}"})
        size += len(data)
    return cells, size


def write_hf_folder(
    records: Iterable[ExportRecord], out_dir: Path, *, card: HfCard, with_audio: bool
) -> dict[str, int]:
    """Write the Parquet files and the card under ``out_dir``; returns rows per split."""
    schema = hf_schema(with_audio=with_audio)
    (out_dir / "data").mkdir(parents=True, exist_ok=True)
    writers: dict[str, RowGroupWriter] = {}
    try:
        for record in records:
            split = split_name(record.text("split"))
            writer = writers.get(split)
            if writer is None:
                path = out_dir / "data" / f"{split}-00000-of-00001.parquet"
                writer = writers[split] = RowGroupWriter(path, schema)
            row = label_row(record)
            row["image"], size = _file_cell(record, "image")
            row[MORE_IMAGES], more_size = _more_images(record)
            size += more_size
            if with_audio:
                row["audio"], audio_size = _file_cell(record, "audio")
                size += audio_size
            row["review"] = json.dumps(record.review, ensure_ascii=False, sort_keys=True)
            row["content_hash"] = record.content_hash
            row["extra"] = json.dumps(record.extra, ensure_ascii=False, sort_keys=True)
            writer.add(row, size)
    finally:
        for writer in writers.values():
            writer.close()
    counts = {split: writer.rows_written for split, writer in sorted(writers.items())}
    (out_dir / "README.md").write_text(
        dataset_card(card, counts, with_audio=with_audio), encoding="utf-8"
    )
    return counts


def _feature_lines(with_audio: bool) -> list[str]:
    lines: list[str] = []
    for column in hf_schema(with_audio=with_audio):
        lines.append(f"  - name: {column.name}")
        if column.name in {"image", "audio"}:
            lines.append(f"    dtype: {column.name}")
        elif column.name == MORE_IMAGES:
            lines.append("    sequence: image")
        elif column.name == OPTION_FIELD:
            lines += [
                "    list:",
                "    - name: label",
                "      dtype: string",
                "    - name: text",
                "      dtype: string",
            ]
        elif column.name in STRING_LIST_FIELDS:
            lines.append("    sequence: string")
        else:
            lines.append("    dtype: string")
    return lines


def dataset_card(card: HfCard, counts: dict[str, int], *, with_audio: bool) -> str:
    """The README.md: YAML front matter (configs, features, splits), then a short description.

    Scalars are written as JSON strings, which YAML reads unchanged.
    """
    splits = counts or {DEFAULT_SPLIT: 0}
    lines = ["---", "configs:", "- config_name: default", "  data_files:"]
    for split in splits:
        lines += [f"  - split: {split}", f"    path: data/{split}-*.parquet"]
    lines += ["dataset_info:", "  features:", *_feature_lines(with_audio), "  splits:"]
    for split, rows in splits.items():
        lines += [f"  - name: {split}", f"    num_examples: {rows}"]
    lines += ["---", "", f"# {card.title}", ""]
    if card.description:
        lines += [card.description, ""]
    if card.version:
        lines += [f"Version: {card.version}", ""]
    lines += [*card.extra_lines]
    if card.licence_note:
        lines += ["", card.licence_note]
    lines += [
        "",
        "Load with `datasets.load_dataset(<this folder>)`. The `review` column holds each "
        "sample's review trail as JSON.",
        "",
    ]
    return "\n".join(lines)
