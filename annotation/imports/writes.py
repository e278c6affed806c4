"""The writes of an import chunk: its new samples, media links, first revisions and imported
versions, each kind in one bulk statement (COPY on PostgreSQL). Media are stored by
``annotation.services.media``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from annotation import models
from annotation.formats.records import ParsedSample
from core.bulk import JsonText, rows_insert

_EMPTY = JsonText("{}")
_STATUS = f'"status": "{models.SampleStatus.IMPORTED.value}"'


def _with_status(values_json: str) -> JsonText:
    """The values' JSON object with the new sample's status added, as a first revision's
    ``after`` holds it (``{**values, "status": …}``)."""
    body = values_json[1:-1]
    return JsonText(f"{{{body}, {_STATUS}}}" if body else f"{{{_STATUS}}}")


@dataclass
class Media:
    """One media slot of a row: its role, position and hash (and bytes, when new)."""

    role: str
    position: int
    sha: str
    data: bytes | None = None
    path: str = ""


@dataclass
class Row:
    """A parsed row with its media and label values, and the problems found with it."""

    parsed: ParsedSample
    media: list[Media]
    values: dict[str, Any]
    # Every problem found with the row; a row with any is rejected with all of them.
    problems: list[str] = field(default_factory=list)
    content_hash: str = ""
    # The label values as JSON text (see sample_values_json), encoded once for every table,
    # and the sample's JSON fields as JSON text, when the reader encoded them.
    values_json: str = ""
    json: dict[str, JsonText] = field(default_factory=dict)

    @property
    def slots(self) -> list[tuple[str, int, str]]:
        return [(m.role, m.position, m.sha) for m in self.media]


def create_samples(
    rows: list[Row],
    asset_ids: Mapping[str, int],
    *,
    dataset_id: int,
    by_id: int | None,
    reason: str,
) -> list[int]:
    """Insert the new samples with their media links and first revisions; their ids."""
    if not rows:
        return []
    ids = rows_insert(
        models.Sample,
        [
            {
                "dataset_id": dataset_id,
                "external_id": row.parsed.external_id,
                "status": models.SampleStatus.IMPORTED,
                "content_hash": row.content_hash,
                "extra": row.parsed.extra,
                **row.values,
                **row.json,
            }
            for row in rows
        ],
    )
    rows_insert(
        models.SampleMedia,
        [
            {
                "sample_id": sample_id,
                "asset_id": asset_ids[m.sha],
                "role": m.role,
                "position": m.position,
            }
            for sample_id, row in zip(ids, rows, strict=True)
            for m in row.media
        ],
    )
    rows_insert(
        models.SampleRevision,
        [
            {
                "sample_id": sample_id,
                "number": 1,
                "changed_by_id": by_id,
                "source": models.ChangeSource.IMPORT,
                "before": _EMPTY,
                "after": _with_status(row.values_json),
                "reason": reason,
            }
            for sample_id, row in zip(ids, rows, strict=True)
        ],
    )
    return ids


def record_new_versions(rows: list[Row], sample_ids: list[int], *, job_id: int) -> None:
    """The imported version of each new sample (none exists yet: plain inserts)."""
    rows_insert(
        models.ImportedVersion,
        [
            {
                "sample_id": sample_id,
                "job_id": job_id,
                "content_hash": row.content_hash,
                "values": JsonText(row.values_json),
                "media": row.slots,
            }
            for row, sample_id in zip(rows, sample_ids, strict=True)
        ],
    )
