"""The writes of an import chunk: its new samples, media links, first revisions and imported
versions, each kind in one bulk statement (COPY on PostgreSQL). Media are stored by
``annotation.services.media``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from annotation import models
from annotation.formats.records import ParsedSample, RowError, shown
from annotation.services.samples import LABEL_FIELDS
from core.bulk import JsonText, rows_insert_values

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
    # The medium's licence and source as the row states them ("" when it names none).
    licence: str = ""
    source_url: str = ""


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
    question_key: int | None = None

    @property
    def slots(self) -> list[tuple[str, int, str]]:
        return [(m.role, m.position, m.sha) for m in self.media]


_SAMPLE = (
    "dataset_id",
    "external_id",
    "status",
    "content_hash",
    "question_key",
    *LABEL_FIELDS,
    "extra",
)
_MEDIA = ("sample_id", "asset_id", "role", "position")
_REVISION = ("sample_id", "number", "changed_by_id", "source", "before", "after", "reason")
_VERSION = ("sample_id", "job_id", "content_hash", "values", "media")


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
    imported = models.SampleStatus.IMPORTED.value
    # Per row: its label values then its extra, in _SAMPLE's order, with the JSON texts the
    # reader encoded in place of the values they encode.
    ids = rows_insert_values(
        models.Sample,
        _SAMPLE,
        [
            (
                dataset_id,
                row.parsed.external_id,
                imported,
                row.content_hash,
                row.question_key,
                *{**row.values, "extra": row.parsed.extra, **row.json}.values(),
            )
            for row in rows
        ],
    )
    rows_insert_values(
        models.SampleMedia,
        _MEDIA,
        [
            (sample_id, asset_ids[m.sha], m.role, m.position)
            for sample_id, row in zip(ids, rows, strict=True)
            for m in row.media
        ],
    )
    source = models.ChangeSource.IMPORT.value
    rows_insert_values(
        models.SampleRevision,
        _REVISION,
        [
            (sample_id, 1, by_id, source, _EMPTY, _with_status(row.values_json), reason)
            for sample_id, row in zip(ids, rows, strict=True)
        ],
    )
    return ids


# A rejected row's message names the values it refuses; one of a million characters is cut.
ROW_ERROR_MAX_CHARS = 2000


def row_errors_insert(job_id: int, errors: Iterable[RowError], *, prefix: str = "") -> None:
    """Store an import's rejected rows. Their ids and messages are stored as a person reads
    them: NUL characters (which PostgreSQL refuses in text) written as \\u0000, and a
    message past ROW_ERROR_MAX_CHARS cut with an ellipsis."""
    rows = []
    for error in errors:
        text = shown(prefix + error.message)
        if len(text) > ROW_ERROR_MAX_CHARS:
            text = text[: ROW_ERROR_MAX_CHARS - 1] + "…"
        rows.append(
            models.ImportRowError(
                job_id=job_id,
                row=error.row,
                external_id=shown(error.external_id)[:200],
                message=text,
            )
        )
    models.ImportRowError.objects.bulk_create(rows)


def record_new_versions(rows: list[Row], sample_ids: list[int], *, job_id: int) -> None:
    """The imported version of each new sample (none exists yet: plain inserts)."""
    rows_insert_values(
        models.ImportedVersion,
        _VERSION,
        [
            (sample_id, job_id, row.content_hash, JsonText(row.values_json), row.slots)
            for row, sample_id in zip(rows, sample_ids, strict=True)
        ],
    )
