"""The release Parquet: the JSONL's fields as typed columns, media bytes inside the file.

Rows are written one row group at a time (bounded by rows and by bytes), so memory stays flat
whatever the number of samples. ``iter_release_parquet`` reads this file (and the Hugging Face
folder's files) back as parsed samples, for imports and round-trip checks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from annotation.formats.records import (
    GOLD_KEY,
    MediaRef,
    ParsedSample,
    RowError,
    gold_flag,
    hostile_problem,
    loads_json,
    message,
    shown,
)
from annotation.snapshots.exports.records import (
    OPTION_FIELD,
    STRING_LIST_FIELDS,
    TEXT_FIELDS,
    ExportRecord,
)

ROW_GROUP_ROWS = 1000
ROW_GROUP_BYTES = 64 * 1024 * 1024

OPTION_TYPE = pa.list_(pa.struct([("label", pa.string()), ("text", pa.string())]))
MEDIA_TYPE = pa.list_(
    pa.struct(
        [
            ("role", pa.string()),
            ("position", pa.int32()),
            ("bytes", pa.binary()),
            ("path", pa.string()),
            ("sha256", pa.string()),
            ("mime_type", pa.string()),
        ]
    )
)
# Hugging Face's Image and Audio features are stored as this struct.
HF_FILE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def label_columns() -> list[pa.Field]:
    """The columns every table release shares: id, labels and provenance."""
    return [
        pa.field("external_id", pa.string()),
        *(pa.field(name, pa.string()) for name in TEXT_FIELDS),
        pa.field(OPTION_FIELD, OPTION_TYPE),
        *(pa.field(name, pa.list_(pa.string())) for name in STRING_LIST_FIELDS),
        pa.field("pair_external_id", pa.string()),
        pa.field("source_url", pa.string()),
        pa.field("licence", pa.string()),
        pa.field("image_licence", pa.string()),
        pa.field("audio_licence", pa.string()),
    ]


def trail_columns() -> list[pa.Field]:
    return [
        pa.field("extra", pa.string()),
        pa.field("review", pa.string()),
        pa.field("content_hash", pa.string()),
        pa.field("status", pa.string()),
        pa.field("revision", pa.int32()),
    ]


RELEASE_SCHEMA = pa.schema([*label_columns(), pa.field("media", MEDIA_TYPE), *trail_columns()])


def label_row(record: ExportRecord) -> dict[str, Any]:
    row: dict[str, Any] = {"external_id": record.external_id}
    row.update({name: record.text(name) for name in TEXT_FIELDS})
    row[OPTION_FIELD] = record.options()
    row.update({name: record.string_list(name) for name in STRING_LIST_FIELDS})
    row["pair_external_id"] = record.pair_external_id
    row["source_url"] = record.source_url
    row["licence"] = record.licence
    row["image_licence"] = record.licence_of("image")
    row["audio_licence"] = record.licence_of("audio")
    return row


def trail_row(record: ExportRecord) -> dict[str, Any]:
    return {
        "extra": json.dumps(record.extra, ensure_ascii=False, sort_keys=True),
        "review": json.dumps(record.review, ensure_ascii=False, sort_keys=True),
        "content_hash": record.content_hash,
        "status": record.status,
        "revision": record.revision,
    }


class RowGroupWriter:
    """A ParquetWriter fed row by row, flushing a row group when it holds enough rows or bytes."""

    def __init__(
        self,
        path: Path,
        schema: pa.Schema,
        *,
        max_rows: int = ROW_GROUP_ROWS,
        max_bytes: int = ROW_GROUP_BYTES,
    ) -> None:
        self.schema = schema
        self.path = path
        self.rows_written = 0
        self._writer = pq.ParquetWriter(str(path), schema, compression="zstd")
        self._rows: list[dict[str, Any]] = []
        self._bytes = 0
        self._max_rows = max_rows
        self._max_bytes = max_bytes

    def add(self, row: dict[str, Any], size: int = 0) -> None:
        self._rows.append(row)
        self._bytes += size
        if len(self._rows) >= self._max_rows or self._bytes >= self._max_bytes:
            self.flush()

    def flush(self) -> None:
        if self._rows:
            # Column lists convert far faster than Table.from_pylist over nested rows.
            columns = {name: [row.get(name) for row in self._rows] for name in self.schema.names}
            self._writer.write_table(pa.Table.from_pydict(columns, schema=self.schema))
            self.rows_written += len(self._rows)
            self._rows, self._bytes = [], 0

    def close(self) -> None:
        self.flush()
        self._writer.close()


def write_parquet(
    records: Iterable[ExportRecord], path: Path, *, max_rows: int = ROW_GROUP_ROWS
) -> int:
    """Write the release Parquet file, ``max_rows`` per row group; returns the number of rows."""
    writer = RowGroupWriter(path, RELEASE_SCHEMA, max_rows=max_rows)
    try:
        for record in records:
            media = []
            size = 0
            for item in sorted(record.media, key=lambda m: (m.role, m.position)):
                data = item.read()
                size += len(data)
                media.append(
                    {
                        "role": item.role,
                        "position": item.position,
                        "bytes": data,
                        "path": item.archive_path,
                        "sha256": item.sha256,
                        "mime_type": item.mime_type,
                    }
                )
            writer.add(label_row(record) | {"media": media} | trail_row(record), size)
    finally:
        writer.close()
    return writer.rows_written


def iter_release_parquet(
    source: str | os.PathLike[str], *, batch_rows: int = 256
) -> Iterator[ParsedSample | RowError]:
    """Samples back from a release Parquet file or a Hugging Face folder's Parquet file; a
    row that cannot be stored (``hostile_problem``) is a RowError."""
    parquet = pq.ParquetFile(os.fspath(source))
    row = 0
    for batch in parquet.iter_batches(batch_size=batch_rows):
        for record in batch.to_pylist():
            row += 1
            problem = hostile_problem(record)
            if problem is not None:
                external_id = shown(str(record.get("external_id") or ""))
                yield RowError(
                    row, external_id, message("row {row}: {problem}", row=row, problem=problem)
                )
                continue
            yield _parsed(row, record)


def _parsed(row: int, record: dict[str, Any]) -> ParsedSample:
    media: list[MediaRef] = []
    for item in record.get("media") or []:
        media.append(MediaRef(item["role"], item["position"], data=item["bytes"], path=None))
    for role in ("image", "audio"):
        cell = record.get(role)
        if isinstance(cell, dict) and cell.get("bytes"):
            media.append(MediaRef(role, 0, data=cell["bytes"], path=None))
    for position, cell in enumerate(record.get("more_images") or [], start=1):
        if isinstance(cell, dict) and cell.get("bytes"):
            media.append(MediaRef("image", position, data=cell["bytes"], path=None))
    problems: list[str] = []
    try:
        extra = loads_json(record.get("extra") or "{}")
    except ValueError as exc:
        extra = {}
        problems.append(message("'extra' is not valid JSON ({detail})", detail=exc))
    extra = extra if isinstance(extra, dict) else {}
    problem = hostile_problem(extra)
    if problem is not None:
        extra = {}
        problems.append(message("'extra': {problem}", problem=problem))
    if record.get(GOLD_KEY) is not None:
        try:
            extra[GOLD_KEY] = gold_flag(record[GOLD_KEY])
        except ValueError as exc:
            problems.append(str(exc))
    values: dict[str, Any] = {name: record.get(name) or "" for name in TEXT_FIELDS}
    values.update({name: list(record.get(name) or []) for name in STRING_LIST_FIELDS})
    return ParsedSample(
        row=row,
        external_id=record["external_id"],
        options=[dict(item) for item in record.get(OPTION_FIELD) or []],
        pair_external_id=record.get("pair_external_id") or "",
        source_url=record.get("source_url") or "",
        licence=record.get("licence") or "",
        media=[replace(ref, licence=record.get(f"{ref.role}_licence") or "") for ref in media],
        extra=extra,
        problems=problems,
        **values,
    )
