"""The writes of an import chunk: its media files and the new assets, samples, media links,
first revisions and imported versions, each kind in one bulk statement (COPY on PostgreSQL)."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, wait
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

STORE_THREADS = 8


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


class FileWrites:
    """The media files of a chunk, stored by a few threads (a share each) while its rows are
    inserted. Storage writes wait on the disk or the network, not the GIL."""

    def __init__(self, pool: ThreadPoolExecutor, assets: Mapping[str, NewAsset]) -> None:
        self.names = {
            sha: media_storage_name(kind=a.kind, sha=sha, mime=a.fields["mime_type"])
            for sha, a in assets.items()
        }
        # Per hash: True once this chunk wrote the file, False when it was there already.
        self.wrote: dict[str, bool] = {}
        items = [(sha, self.names[sha], a.data) for sha, a in assets.items()]
        shares = [items[k::STORE_THREADS] for k in range(STORE_THREADS)]
        self.futures = [pool.submit(self._store, share) for share in shares if share]

    def _store(self, share: list[tuple[str, str, bytes]]) -> None:
        for sha, name, data in share:
            self.wrote[sha] = store_file(name, data)

    def wait(self) -> None:
        """Wait for every write; raise the first failure."""
        wait(self.futures)
        for future in self.futures:
            future.result()

    def written(self) -> list[tuple[str, str]]:
        """The (hash, name) of the files this chunk wrote, once every write has ended."""
        wait(self.futures)
        return [(sha, self.names[sha]) for sha, wrote in self.wrote.items() if wrote]


def insert_assets(assets: Mapping[str, NewAsset], files: FileWrites) -> None:
    """One row per new asset (its file is being stored meanwhile)."""
    # Another import may store the same content at the same time: the first row wins.
    rows_insert_new(
        MediaAsset,
        [
            {
                "sha256": sha,
                "kind": asset.kind,
                "file": files.names[sha],
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
