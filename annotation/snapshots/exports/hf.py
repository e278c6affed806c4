"""A folder that Hugging Face ``datasets`` loads directly: ``load_dataset("path/to/folder")``.

``data/<split>-00000-of-00001.parquet`` per split, with ``image`` (and for tri-modal data
``audio``) stored as the ``{bytes, path}`` struct of the Image and Audio features, and a
``README.md`` dataset card whose YAML front matter declares the configs, splits and features.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from annotation.snapshots.exports.hf_card import (
    DEFAULT_SPLIT,
    MORE_IMAGES,
    HfCard,
    SplitSize,
    dataset_card,
    hub_licence,
)
from annotation.snapshots.exports.parquet import (
    HF_FILE_TYPE,
    RowGroupWriter,
    label_columns,
    label_row,
)
from annotation.snapshots.exports.records import ExportRecord

__all__ = ["HfCard", "hf_schema", "split_name", "write_hf_folder"]

_SPLIT_CHARS = re.compile(r"[^\w]+")


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
    licences: set[str] = set()
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
            licences.update(item.licence for item in record.media)
            writer.add(row, size)
    finally:
        for writer in writers.values():
            writer.close()
    sizes = {split: _split_size(writer) for split, writer in sorted(writers.items())}
    text = dataset_card(
        card,
        sizes,
        columns=schema.names,
        with_audio=with_audio,
        licence=hub_licence(licences),
    )
    (out_dir / "README.md").write_text(text, encoding="utf-8")
    return {split: size.rows for split, size in sizes.items()}


def _split_size(writer: RowGroupWriter) -> SplitSize:
    """Rows, uncompressed bytes (the card's ``num_bytes``) and file bytes of a split's file."""
    metadata = pq.read_metadata(writer.path)
    num_bytes = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    return SplitSize(
        rows=writer.rows_written, num_bytes=num_bytes, file_bytes=writer.path.stat().st_size
    )
