"""The writes of an import chunk: its media files and the new assets, samples, media links,
first revisions and imported versions, each kind in one bulk statement (COPY on PostgreSQL)."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from annotation.formats.records import ParsedSample
from annotation.imports.media import store_file
from annotation.models import (
    ChangeSource,
    ImportedVersion,
    MediaAsset,
    Sample,
    SampleMedia,
    SampleRevision,
    SampleStatus,
)
from annotation.services.media import media_storage_name
from core.bulk import rows_insert, rows_insert_new


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

    @property
    def slots(self) -> list[tuple[str, int, str]]:
        return [(m.role, m.position, m.sha) for m in self.media]


@dataclass
class NewAsset:
    """A decoded media file that no asset holds yet: what its row will store."""

    kind: str
    data: bytes
    fields: dict[str, Any]
    source_url: str
    licence: str


def start_files(
    pool: ThreadPoolExecutor, assets: Mapping[str, NewAsset]
) -> dict[str, tuple[str, Future[bool]]]:
    """Start storing one file per new asset: its name and the write, by hash."""
    files: dict[str, tuple[str, Future[bool]]] = {}
    for sha, asset in assets.items():
        name = media_storage_name(kind=asset.kind, sha=sha, mime=asset.fields["mime_type"])
        files[sha] = (name, pool.submit(store_file, name, asset.data))
    return files


def written_files(files: Mapping[str, tuple[str, Future[bool]]]) -> list[tuple[str, str]]:
    """The (hash, name) of the files this chunk wrote (not those that were there)."""
    return [
        (sha, name)
        for sha, (name, future) in files.items()
        if future.exception() is None and future.result()
    ]


def insert_assets(
    assets: Mapping[str, NewAsset], files: Mapping[str, tuple[str, Future[bool]]]
) -> None:
    """One row per new asset (its file is being stored meanwhile)."""
    # Another import may store the same content at the same time: the first row wins.
    rows_insert_new(
        MediaAsset,
        [
            {
                "sha256": sha,
                "kind": asset.kind,
                "file": files[sha][0],
                "size_bytes": len(asset.data),
                "source_url": asset.source_url,
                "licence": asset.licence,
                **asset.fields,
            }
            for sha, asset in assets.items()
        ],
        unique="sha256",
    )


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
        Sample,
        [
            {
                "dataset_id": dataset_id,
                "external_id": row.parsed.external_id,
                "status": SampleStatus.IMPORTED,
                "content_hash": row.content_hash,
                "extra": row.parsed.extra,
                **row.values,
            }
            for row in rows
        ],
    )
    rows_insert(
        SampleMedia,
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
        SampleRevision,
        [
            {
                "sample_id": sample_id,
                "number": 1,
                "changed_by_id": by_id,
                "source": ChangeSource.IMPORT,
                "before": {},
                "after": {**row.values, "status": SampleStatus.IMPORTED},
                "reason": reason,
            }
            for sample_id, row in zip(ids, rows, strict=True)
        ],
    )
    return ids


def record_new_versions(rows: list[Row], sample_ids: list[int], *, job_id: int) -> None:
    """The imported version of each new sample (none exists yet: plain inserts)."""
    rows_insert(
        ImportedVersion,
        [
            {
                "sample_id": sample_id,
                "job_id": job_id,
                "content_hash": row.content_hash,
                "values": row.values,
                "media": row.slots,
            }
            for row, sample_id in zip(rows, sample_ids, strict=True)
        ],
    )
