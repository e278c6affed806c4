"""The project's own export format: one `ParsedSample` per JSON line.

Media bytes travel as base64 in `data_base64`; every other field keeps its name, so
`iter_jsonl(write_jsonl(samples))` gives the samples back (rows renumbered by line). The
release JSONL's review trail, status, revision and content hash (``RELEASE_STATE_KEYS``) are
the state of the release, not of the sample: they are read past, never kept as custom fields.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from annotation.formats.records import (
    GOLD_KEY,
    RELEASE_STATE_KEYS,
    MediaRef,
    ParsedSample,
    RowError,
    as_text,
    decode_base64,
    gold_flag,
    message,
)
from annotation.formats.textio import Source, iter_json_records

# A reader's findings are not part of the sample: never written, never read back.
_SAMPLE_FIELDS = {f.name: f for f in dataclasses.fields(ParsedSample) if f.name != "problems"}
_LIST_FIELDS = ("options", "generator_models", "predicate", "media")


def sample_to_dict(sample: ParsedSample) -> dict[str, Any]:
    """A sample as a JSON-ready dict (without its row number, which belongs to the file)."""
    data = {name: getattr(sample, name) for name in _SAMPLE_FIELDS if name not in {"row", "media"}}
    data["media"] = [
        {
            "role": ref.role,
            "position": ref.position,
            "data_base64": base64.b64encode(ref.data).decode("ascii") if ref.data else None,
            "path": ref.path,
            "same_as": ref.same_as,
            "licence": ref.licence,
        }
        for ref in sample.media
    ]
    return data


def dump_sample(sample: ParsedSample) -> str:
    """One JSON line (without the line break) for a sample."""
    return json.dumps(sample_to_dict(sample), ensure_ascii=False, separators=(",", ":"))


def write_jsonl(samples: Iterable[ParsedSample], stream: IO[str]) -> int:
    """Write samples as JSON lines to a text stream; returns how many were written."""
    count = 0
    for sample in samples:
        stream.write(dump_sample(sample))
        stream.write("\n")
        count += 1
    return count


def iter_jsonl(source: Source) -> Iterator[ParsedSample | RowError]:
    """Stream samples back from the project's JSON-lines export."""
    expected = message("a record of this site's export has external_id, the label fields and media")
    for row, record in iter_json_records(source, [("external_id",)], expected=expected):
        if isinstance(record, RowError):
            yield record
            continue
        try:
            yield _sample_from_dict(row, record)
        except (TypeError, ValueError) as exc:
            yield RowError(
                row,
                as_text(record.get("external_id")),
                message("line {row}: the record is malformed ({detail})", row=row, detail=exc),
            )


def _sample_from_dict(row: int, record: dict[str, Any]) -> ParsedSample:
    if not as_text(record.get("external_id")):
        raise ValueError(message("it has no external_id"))
    values: dict[str, Any] = {"row": row}
    extra = dict(record.get("extra") or {})
    for name, value in record.items():
        if name == "row" or name in RELEASE_STATE_KEYS:
            continue
        if name == GOLD_KEY:
            extra[GOLD_KEY] = gold_flag(value)
            continue
        if name not in _SAMPLE_FIELDS:
            # Unknown keys (a newer writer) are kept rather than lost.
            extra[name] = value
        elif name in _LIST_FIELDS and not isinstance(value, list):
            raise ValueError(message("'{field}' is not a list", field=name))
        elif name not in _LIST_FIELDS and name != "extra" and not isinstance(value, str):
            raise ValueError(message("'{field}' is not text", field=name))
        else:
            values[name] = value
    values["extra"] = extra
    values["media"] = [_media(item) for item in record.get("media") or []]
    return ParsedSample(**values)


def _media(item: dict[str, Any]) -> MediaRef:
    if not isinstance(item, dict) or item.get("role") not in {"image", "audio"}:
        raise ValueError(message("a media entry has no role 'image' or 'audio'"))
    encoded = item.get("data_base64")
    return MediaRef(
        role=item["role"],
        position=int(item.get("position") or 0),
        data=decode_base64(encoded) if encoded else None,
        path=item.get("path"),
        same_as=item.get("same_as"),
        licence=as_text(item.get("licence")),
    )
