"""The release JSONL: one sample per line, readable back by ``annotation.formats.jsonl``.

Keys are the project's own sample fields (so an import gives the same samples back) plus
``review`` (the review trail), ``content_hash``, ``status`` and ``revision``. Media travel as
base64 inside the line, or, for tri-modal releases, as paths to ``media/`` files next to it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from annotation.snapshots.exports.files import store_media
from annotation.snapshots.exports.records import (
    OPTION_FIELD,
    STRING_LIST_FIELDS,
    TEXT_FIELDS,
    ExportRecord,
)


def record_to_dict(record: ExportRecord, *, media_dir: Path | None = None) -> dict[str, Any]:
    """A record as a JSON-ready dict; media inline as base64, or stored under ``media_dir``."""
    data: dict[str, Any] = {"external_id": record.external_id}
    data.update({name: record.text(name) for name in TEXT_FIELDS})
    data[OPTION_FIELD] = record.options()
    data.update({name: record.string_list(name) for name in STRING_LIST_FIELDS})
    data["pair_external_id"] = record.pair_external_id
    data["source_url"] = record.source_url
    data["licence"] = record.licence
    media = []
    for item in sorted(record.media, key=lambda m: (m.role, m.position)):
        entry: dict[str, Any] = {
            "role": item.role,
            "position": item.position,
            "data_base64": None,
            "path": None,
            "same_as": None,
            "sha256": item.sha256,
            "mime_type": item.mime_type,
            "licence": item.licence,
        }
        if media_dir is None:
            entry["data_base64"] = base64.b64encode(item.read()).decode("ascii")
        else:
            entry["path"] = store_media(media_dir, item)
        media.append(entry)
    data["media"] = media
    data["extra"] = record.extra
    data["review"] = record.review
    data["content_hash"] = record.content_hash
    data["status"] = record.status
    data["revision"] = record.revision
    return data


def write_jsonl(
    records: Iterable[ExportRecord], path: Path, *, media_dir: Path | None = None
) -> int:
    """Write one JSON line per record to ``path``; returns how many lines were written."""
    count = 0
    with path.open("w", encoding="utf-8", newline="\n") as stream:
        for record in records:
            stream.write(
                json.dumps(
                    record_to_dict(record, media_dir=media_dir),
                    ensure_ascii=False,
                    separators=(",", ":"),
                )
            )
            stream.write("\n")
            count += 1
    return count
