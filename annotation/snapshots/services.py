"""Release snapshots: a named, immutable export of a dataset's selected samples, built by a
worker in id-ordered chunks, stored in the media storage with a manifest and a diff.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from psycopg import sql

from annotation.extensions import manifest_sections
from annotation.models import (
    Dataset,
    DatasetKind,
    JobStatus,
    NoteKey,
    SampleStatus,
    Snapshot,
    SnapshotContent,
    SnapshotEntry,
    WebhookEvent,
)
from annotation.selectors import taxonomy_view
from annotation.services.samples import LABEL_FIELDS, sample_custom_fields
from annotation.snapshots.exports.files import file_sha256, tree_files, zip_folder
from annotation.snapshots.exports.jsonl import write_jsonl
from annotation.snapshots.exports.manifest import Diff, Tally, build_manifest, file_hashes
from annotation.snapshots.exports.records import ExportMedia, ExportRecord
from annotation.snapshots.exports.review import RevisionInfo, review_trail
from annotation.snapshots.exports.tsv import write_tsv
from annotation.snapshots.selectors import (
    FILTER_FIELDS,
    NOTE_KEYS,
    snapshot_diff,
    snapshot_extra_keys,
    snapshot_option_labels,
    snapshot_previous,
    snapshot_sample_chunks,
    snapshot_samples,
)
from annotation.webhooks.services import webhook_event_emit
from core import jobs
from core.bulk import rows_copy_values
from core.jobs import RETRYABLE, Heartbeat, JobStopped, SweepResult
from core.outages import storage_down_message, storage_unreachable
from core.tasks import enqueue

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

EXPORT_FORMATS: dict[str, Any] = {
    "jsonl": gettext_lazy("JSON lines (tri-modal: zip with media files)"),
    "parquet": gettext_lazy("Parquet"),
    "tsv": gettext_lazy("VLMEvalKit TSV"),
    "hf": gettext_lazy("Hugging Face datasets folder (zip)"),
    "mmooc": gettext_lazy("MMOOC split layout (zip)"),
    "labelstudio": gettext_lazy("Label Studio JSON (zip with its label config)"),
}
IMAGE_ONLY_FORMATS = frozenset({"tsv", "mmooc", "labelstudio"})
DEFAULT_STATUSES = (SampleStatus.VERIFIED.value,)
# Removed samples are never exported, whatever the filter.
EXPORTABLE_STATUSES = tuple(s for s in SampleStatus.values if s != SampleStatus.REMOVED)
CHUNK_SIZE = 1000


def snapshot_filter_clean(*, dataset: Dataset, filter: Mapping[str, Any] | None) -> dict[str, Any]:
    """A snapshot filter in canonical form (verified by default); ValidationError if unknown.

    Keys: ``statuses`` and, optionally, ``groups``, ``categories``, ``formats``, ``scenarios``,
    ``splits`` (each a list of codes). Removed samples are never exported, whatever the filter.
    """
    given = dict(filter or {})
    unknown = sorted(set(given) - {"statuses", *FILTER_FIELDS})
    if unknown:
        raise ValidationError(
            _("Unknown filter keys: %(keys)s.") % {"keys": ", ".join(unknown)}, code="bad_filter"
        )
    cleaned: dict[str, Any] = {"statuses": _codes(given.get("statuses")) or list(DEFAULT_STATUSES)}
    bad = sorted(set(cleaned["statuses"]) - set(EXPORTABLE_STATUSES))
    if bad:
        raise ValidationError(
            _("These statuses cannot be exported: %(values)s.") % {"values": ", ".join(bad)},
            code="bad_filter",
        )
    taxonomy = taxonomy_view(dataset)
    known: dict[str, set[str]] = {
        "groups": taxonomy.groups,
        "categories": set(taxonomy.categories),
        "formats": taxonomy.formats,
        "scenarios": taxonomy.scenarios,
    }
    for key in FILTER_FIELDS:
        values = _codes(given.get(key))
        if not values:
            continue
        unknown_codes = sorted(set(values) - known[key]) if known.get(key) else []
        if unknown_codes:
            raise ValidationError(
                _("Unknown codes in “%(key)s”: %(values)s.")
                % {"key": key, "values": ", ".join(unknown_codes)},
                code="unknown_code",
            )
        cleaned[key] = values
    return cleaned


def _codes(value: Any) -> list[str]:
    if value in (None, ""):
        return []
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValidationError(_("Filter values must be lists of codes."), code="bad_filter")
    return sorted({v.strip() for v in value if v.strip()})


@transaction.atomic
def snapshot_create(
    *,
    dataset: Dataset,
    name: str,
    format: str,
    filter: Mapping[str, Any] | None = None,
    by: User | None = None,
    queue: bool = True,
) -> Snapshot:
    """Register a snapshot and queue its build once committed (``queue=False``: build it
    yourself with ``snapshot_build``). Names are unique per dataset: a release never changes.
    """
    name = name.strip()
    if not name:
        raise ValidationError(_("A snapshot needs a name."), code="name_required")
    if format not in EXPORT_FORMATS:
        raise ValidationError(
            _("Unknown export format “%(format)s” (known: %(known)s).")
            % {"format": format, "known": ", ".join(EXPORT_FORMATS)},
            code="bad_format",
        )
    if format in IMAGE_ONLY_FORMATS and dataset.kind == DatasetKind.TRIMODAL:
        raise ValidationError(
            _("The format “%(format)s” holds image questions only, not tri-modal scenarios.")
            % {"format": format},
            code="bad_format",
        )
    cleaned = snapshot_filter_clean(dataset=dataset, filter=filter)
    if Snapshot.objects.filter(dataset=dataset, name=name).exists():
        raise ValidationError(
            _("This dataset already has a snapshot named “%(name)s”; snapshots never change.")
            % {"name": name},
            code="name_taken",
        )
    snapshot = Snapshot.objects.create(
        dataset=dataset, name=name, format=format, filter=cleaned, created_by=by
    )
    if queue:
        transaction.on_commit(lambda: _enqueue(snapshot.pk))
    return snapshot


def snapshot_create_from_fields(
    *, dataset: Dataset, fields: Mapping[str, Any], by: User | None
) -> Snapshot:
    """``snapshot_create`` from a form's or an API payload's fields: ``name``, ``format``, and
    the sample filter in the others."""
    filter = dict(fields)
    return snapshot_create(
        dataset=dataset, name=filter.pop("name"), format=filter.pop("format"), filter=filter, by=by
    )


def snapshot_build(*, snapshot_id: int, chunk_size: int = CHUNK_SIZE) -> Snapshot | None:
    """Build a queued snapshot: write the release, store it, record entries and the manifest.

    Safe to run twice: a finished or failed snapshot is left alone, and so is one that another
    worker is building (its heartbeat is fresh); one whose worker died starts over. A failure
    marks the snapshot failed with a readable message.
    """
    claim = jobs.job_claim(Snapshot, snapshot_id)
    snapshot = Snapshot.objects.select_related("dataset").filter(pk=snapshot_id).first()
    if claim is None or snapshot is None:
        return snapshot
    try:
        with (
            jobs.job_heartbeat(claim) as heartbeat,
            tempfile.TemporaryDirectory(prefix="snapshot-") as tmp,
        ):
            SnapshotEntry.objects.filter(snapshot=snapshot).delete()  # an earlier attempt's
            heartbeat.beat(done=0)
            _build(snapshot, Path(tmp), chunk_size, heartbeat)
    except JobStopped:
        logger.info("snapshot %s was taken over", snapshot_id)
    except Exception as exc:
        SnapshotEntry.objects.filter(snapshot=snapshot).delete()
        if storage_unreachable(exc):
            logger.warning("snapshot %s waits for the media storage", snapshot_id, exc_info=True)
            jobs.job_wait(
                claim,
                message=storage_down_message(),
                send=lambda: enqueue(
                    "annotation.build_snapshot", snapshot_id, countdown=jobs.SERVICE_RETRY_SECONDS
                ),
            )
            snapshot.refresh_from_db()
            return snapshot
        logger.exception("snapshot %s failed", snapshot_id)
        jobs.job_finish(
            claim,
            status=JobStatus.FAILED,
            message=_("The export failed: %(error)s") % {"error": exc},
        )
    snapshot.refresh_from_db()
    return snapshot


def snapshot_retry(*, snapshot: Snapshot) -> Snapshot:
    """Build a failed snapshot again."""
    with transaction.atomic():
        locked = Snapshot.objects.select_for_update().get(pk=snapshot.pk)
        if locked.status not in RETRYABLE:
            raise ValidationError(_("Only a failed snapshot can be retried."), code="not_failed")
        Snapshot.objects.filter(pk=locked.pk).update(
            **jobs.job_retry_fields(), done=0, total=None, finished_at=None
        )
        transaction.on_commit(lambda: _enqueue(locked.pk))
    snapshot.refresh_from_db()
    return snapshot


def snapshots_sweep() -> SweepResult:
    """Start again the snapshots whose worker died and send those whose message was lost."""
    return jobs.job_sweep(Snapshot, send=lambda pk: enqueue("annotation.build_snapshot", pk))


def _enqueue(snapshot_id: int) -> None:
    jobs.job_enqueue(
        Snapshot, snapshot_id, lambda: enqueue("annotation.build_snapshot", snapshot_id)
    )


def _build(snapshot: Snapshot, tmp: Path, chunk_size: int, heartbeat: Heartbeat) -> None:
    dataset = snapshot.dataset
    total = snapshot_samples(dataset=dataset, filter=snapshot.filter).count()
    heartbeat.beat(total=total)
    snapshot.total = total
    tally = Tally()
    records = tally.counted(_records(snapshot, chunk_size, heartbeat))
    out = tmp / "release"
    out.mkdir()
    slug = slugify(snapshot.name) or f"snapshot-{snapshot.pk}"
    trimodal = dataset.kind == DatasetKind.TRIMODAL
    notes: dict[str, Any] = {}
    packed = True
    # The Parquet writers (pyarrow) are imported by the branches that use them, so that a
    # process importing this module (every web process) does not load pyarrow.
    if snapshot.format == "jsonl" and trimodal:
        write_jsonl(records, out / "data.jsonl", media_dir=out)
    elif snapshot.format == "jsonl":
        write_jsonl(records, out / f"{slug}.jsonl")
        packed = False
    elif snapshot.format == "parquet":
        from annotation.snapshots.exports.parquet import write_parquet

        write_parquet(records, out / f"{slug}.parquet")
        packed = False
    elif snapshot.format == "tsv":
        labels = snapshot_option_labels(dataset=dataset, filter=snapshot.filter)
        keys = snapshot_extra_keys(dataset=dataset, filter=snapshot.filter)
        write_tsv(records, out / f"{slug}.tsv", option_labels=labels, extra_keys=keys)
        packed = False
    elif snapshot.format == "hf":
        from annotation.snapshots.exports.hf import HfCard, write_hf_folder

        card = HfCard(
            title=f"{dataset.name} ({snapshot.name})",
            description=dataset.description,
            version=dataset.version,
        )
        notes["splits"] = write_hf_folder(records, out, card=card, with_audio=trimodal)
    elif snapshot.format == "labelstudio":
        from annotation.snapshots.exports.labelstudio import write_labelstudio

        keys = snapshot_extra_keys(dataset=dataset, filter=snapshot.filter)
        notes["tasks"] = write_labelstudio(records, out, extra_keys=keys)
    else:
        from annotation.snapshots.exports.mmooc_layout import write_mmooc_layout

        keys = snapshot_extra_keys(dataset=dataset, filter=snapshot.filter)
        counts = write_mmooc_layout(records, out, extra_keys=keys)
        notes.update(ooc=counts.ooc, ic=counts.ic, skipped_not_ooc_or_ic=counts.skipped)

    previous = snapshot_previous(snapshot=snapshot)
    diff: Diff | None = None
    if previous is not None:
        diff = snapshot_diff(snapshot=snapshot, previous=previous)
    names = tree_files(out)
    files = file_hashes(out, names)
    manifest_args: dict[str, Any] = {
        "snapshot": {
            "id": snapshot.pk,
            "name": snapshot.name,
            "format": snapshot.format,
            "created_at": snapshot.created_at.isoformat(),
            "created_by": snapshot.created_by.get_username() if snapshot.created_by else None,
        },
        "dataset": {"id": dataset.pk, "name": dataset.name, "version": dataset.version},
        "filter": snapshot.filter,
        "app_version": _app_version(),
        "tally": tally,
        "files": files,
        "previous": {"id": previous.pk, "name": previous.name} if previous else None,
        "diff": diff,
        "notes": notes or None,
        "sections": manifest_sections(dataset=dataset),
    }
    folder = f"snapshots/{dataset.pk}/{snapshot.pk}-{slug}"
    if packed:
        (out / "manifest.json").write_text(
            _json(build_manifest(artifact={}, **manifest_args)), encoding="utf-8"
        )
        artifact_path = tmp / f"{slug}-{snapshot.format}.zip"
        zip_folder(out, [*names, "manifest.json"], artifact_path)
        artifact = {
            "name": artifact_path.name,
            "sha256": file_sha256(artifact_path),
            "bytes": artifact_path.stat().st_size,
        }
    else:  # the release's one file, hashed already (gigabytes at a million samples)
        artifact_path = out / names[0]
        artifact = {"name": artifact_path.name, **files[names[0]]}
    manifest = build_manifest(artifact=artifact, **manifest_args)
    stored = _store(f"{folder}/{artifact_path.name}", artifact_path)
    _store_bytes(f"{folder}/manifest.json", _json(manifest).encode("utf-8"))
    if not jobs.job_finish(
        heartbeat.claim,
        status=JobStatus.SUCCEEDED,
        file=stored,
        manifest=manifest,
        previous=previous,
        done=tally.samples,
        total=snapshot.total,
    ):
        raise JobStopped
    webhook_event_emit(
        event=WebhookEvent.SNAPSHOT_BUILT,
        dataset=dataset,
        data={
            "snapshot": {
                "id": snapshot.pk,
                "name": snapshot.name,
                "format": snapshot.format,
                "samples": tally.samples,
                "file": artifact,
                "manifest_sha256": file_sha256_bytes(_json(manifest).encode("utf-8")),
            }
        },
    )


def file_sha256_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _records(snapshot: Snapshot, chunk_size: int, heartbeat: Heartbeat) -> Iterator[ExportRecord]:
    """Export records chunk by chunk; each chunk also records its entries and the progress."""
    done = 0
    chunks = snapshot_sample_chunks(
        dataset=snapshot.dataset, filter=snapshot.filter, chunk_size=chunk_size
    )
    for chunk in chunks:
        records = [
            _record(
                row,
                chunk.media.get(row["id"], []),
                chunk.revisions.get(row["id"], []),
                chunk.notes.get(row["id"], {}),
            )
            for row in chunk.samples
        ]
        rows_copy_values(
            SnapshotEntry,
            _ENTRY_COLUMNS,
            [
                (snapshot.pk, row["id"], row["external_id"], row["content_hash"])
                for row in chunk.samples
            ],
        )
        _contents_keep(
            {
                row["content_hash"]: content_fields(row, chunk.media.get(row["id"], []))
                for row in {row["content_hash"]: row for row in chunk.samples}.values()
            }
        )
        done += len(chunk.samples)
        heartbeat.beat(done=done)
        yield from records


_ENTRY_COLUMNS = ("snapshot_id", "sample_id", "external_id", "content_hash")
# Contents already kept (an unchanged sample, an earlier snapshot, a concurrent build) are left
# alone. One statement for the chunk's contents, sent as one JSON object by hash: bulk_create
# with ignore_conflicts cost about as much per row as the chunk's whole read, and text arrays
# are quoted item by item in Python.
_CONTENTS_INSERT = sql.SQL(
    "INSERT INTO {table} ({hash}, {fields}) "
    "SELECT given.key, given.value FROM jsonb_each(%s::jsonb) AS given "
    "ON CONFLICT ({hash}) DO NOTHING"
).format(
    table=sql.Identifier(SnapshotContent._meta.db_table),
    hash=sql.Identifier("content_hash"),
    fields=sql.Identifier("fields"),
)


def _contents_keep(contents: Mapping[str, dict[str, Any]]) -> None:
    """Keep each content by its hash, unless it is kept already (one statement)."""
    if not contents:
        return
    with connection.cursor() as cursor:
        cursor.execute(_CONTENTS_INSERT, [json.dumps(contents)])


def content_fields(row: Mapping[str, Any], media: list[dict[str, Any]]) -> dict[str, Any]:
    """What a sample's content hash stands for, by field name: the label fields, the custom
    fields as ``extra.<key>`` and the media as ``role/position: sha256``."""
    fields: dict[str, Any] = {name: row[name] for name in LABEL_FIELDS}
    for key, value in sample_custom_fields(row["extra"]).items():
        if key not in NOTE_KEYS:
            fields[f"extra.{key}"] = value
    if media:
        fields["media"] = [
            f"{link['role']}/{link['position']}: {link['asset__sha256']}" for link in media
        ]
    return fields


def _record(
    row: dict[str, Any],
    media: list[dict[str, Any]],
    revisions: list[dict[str, Any]],
    notes: dict[str, Any],
) -> ExportRecord:
    history = [
        RevisionInfo(
            number=revision["number"],
            source=revision["source"],
            changed_by=revision["changed_by__username"] or "",
            changed_at=revision["changed_at"].isoformat(),
        )
        for revision in revisions
    ]
    return ExportRecord(
        external_id=row["external_id"],
        labels={name: row[name] for name in LABEL_FIELDS},
        content_hash=row["content_hash"],
        status=row["status"],
        revision=row["revision"],
        pair_external_id=row["pair_external_id"] or "",
        media=[_media(link) for link in media],
        review=review_trail(
            history, notes.get(NoteKey.REVIEW_SUMMARY), notes.get(NoteKey.JUDGE_VOTES)
        ),
        extra=dict(row["extra"] or {}),
    )


def _media(link: dict[str, Any]) -> ExportMedia:
    name = str(link["asset__file"])

    def read() -> bytes:
        with default_storage.open(name, "rb") as handle:
            return bytes(handle.read())

    return ExportMedia(
        role=link["role"],
        position=link["position"],
        sha256=link["asset__sha256"],
        mime_type=link["asset__mime_type"],
        extension=Path(name).suffix,
        read=read,
        licence=link["asset__licence"],
        source_url=link["asset__source_url"],
    )


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)


def _store(name: str, path: Path) -> str:
    """Upload a local file to the media storage under exactly this name (replacing a rerun's)."""
    if default_storage.exists(name):
        default_storage.delete(name)
    with path.open("rb") as handle:
        return default_storage.save(name, File(handle, name=path.name))


def _store_bytes(name: str, data: bytes) -> str:
    if default_storage.exists(name):
        default_storage.delete(name)
    return default_storage.save(name, ContentFile(data))


def _app_version() -> str:
    """The site's version (the API's declared version unless APP_VERSION is set)."""
    return str(
        getattr(settings, "APP_VERSION", "") or settings.SPECTACULAR_SETTINGS.get("VERSION", "")
    )
