"""The batched import of parsed rows into a dataset, one chunk and one transaction at a time.

Each row is checked completely (fields, taxonomy, every media file decoded) before anything of
it is stored, so a rejected row leaves nothing behind. A chunk's media files, assets, samples,
links, revisions, row errors and the job's counters commit together; if the transaction
fails, the files it wrote are deleted again unless another asset row owns them.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError, connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from psycopg import sql

from annotation.duplicates import Keyed
from annotation.formats.records import ParsedSample, RowError
from annotation.imports.reader import Chunk, Encoded, Inspected, RowChecker
from annotation.imports.reimport import (
    apply_row,
    existing_rows,
    gold_flags_refresh,
    provenance_changed,
)
from annotation.imports.sources import MediaMissing, OpenedSource
from annotation.imports.writes import (
    Media,
    Row,
    create_samples,
    record_new_versions,
    row_errors_insert,
)
from annotation.media_checks import MediaError, sha256_hex
from annotation.models import (
    Dataset,
    ImportedVersion,
    ImportJob,
    JobStatus,
    MediaAsset,
    MediaKind,
    MediaRole,
    SafetyLabel,
    Sample,
    SampleStatus,
)
from annotation.selectors import taxonomy_view
from annotation.services.duplicates import (
    duplicates_record_new,
    import_finds_duplicates,
    import_question_key,
)
from annotation.services.media import (
    FileWrites,
    MediaInspection,
    NewAsset,
    media_assets_insert,
    media_derive_send,
    media_files_storing,
    media_max_bytes,
)
from annotation.services.samples import (
    LABEL_FIELDS,
    sample_content_hash_of_json,
    sample_custom_json,
    sample_link_pair,
    sample_values_json,
)
from core.jobs import JobStopped
from core.lookups import AnyOf

if TYPE_CHECKING:
    from django.contrib.auth.models import User

CHUNK_ROWS = 500


@dataclass
class _Plan:
    """What one chunk writes: new assets, new samples, changed ones, versions, row errors."""

    new_assets: dict[str, NewAsset]
    needed: set[str]
    fresh: list[Row]
    changed: list[tuple[Row, Sample]]
    unrecorded: list[tuple[Row, Sample]]
    versions: Mapping[int, ImportedVersion]
    errors: list[RowError]
    seen: int
    # Unchanged rows' gold flags ({extra}, sample): the flag is no label, so it changes no hash.
    gold_flags: list[tuple[Mapping[str, Any], Sample]] = field(default_factory=list)
    # The perceptual hash of every image of the chunk, by its sha256 (None: not hashed).
    phashes: Mapping[str, int | None] = field(default_factory=dict)


@dataclass
class Counts:
    rows_done: int = 0
    imported: int = 0
    unchanged: int = 0
    updated: int = 0
    rejected: int = 0
    # Samples sent to adjudication: the source changed what a reviewer had corrected.
    adjudication: int = 0
    unpaired: list[str] = field(default_factory=list)

    def fields(self) -> dict[str, int]:
        """The counts as the job row stores them."""
        return {
            "rows_done": self.rows_done,
            "imported": self.imported,
            "unchanged": self.unchanged,
            "updated": self.updated,
            "rejected": self.rejected,
        }


def _commit_without_waiting() -> None:
    """The chunk's commit does not wait for its WAL to reach the disk. Safe
    here: the job row's counts commit with the chunk, so a chunk that a database crash lost
    is lost with its count, and the resumed job imports it again (its files, named by their
    hash, are found in place)."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL synchronous_commit = off")


def _media_label(media: Media) -> str:
    label = _("%(role)s %(number)s") % {
        "role": MediaRole(media.role).label,
        "number": media.position + 1,
    }
    return f"{label} ({media.path})" if media.path else label


def _first_image_hash(row: Row, phashes: Mapping[str, int | None]) -> int | None:
    """The perceptual hash of the row's first image (its media are in role, position order)."""
    for media in row.media:
        if media.role == MediaRole.IMAGE:
            return phashes.get(media.sha)
    return None


def _id_key(external_id: str) -> bytes:
    """A fixed-size key of an external id (any text, NUL and lone surrogates included)."""
    return hashlib.blake2b(external_id.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class SeenIds:
    """The external ids of the source's rows read so far, each with the row that used it
    first: in a temporary table of the importing connection, so that the importing process's
    memory does not grow with the source (a dict of a million ids held some 150 MB). A
    resumed job reads the committed rows again, so the table is filled again too."""

    def __init__(self, job_id: int) -> None:
        self.table = sql.Identifier(f"import_seen_ids_{job_id}")
        with connection.cursor() as cursor:
            cursor.execute(
                sql.SQL(
                    "CREATE TEMPORARY TABLE IF NOT EXISTS {table} "
                    "(key bytea PRIMARY KEY, row integer NOT NULL)"
                ).format(table=self.table)
            )
            cursor.execute(sql.SQL("TRUNCATE {table}").format(table=self.table))

    def first_rows(self, external_ids: Iterable[str]) -> dict[str, int]:
        """The row that first used each of these ids, for those used already."""
        keys = {_id_key(external_id): external_id for external_id in external_ids}
        if not keys:
            return {}
        with connection.cursor() as cursor:
            cursor.execute(
                sql.SQL("SELECT key, row FROM {table} WHERE key = ANY(%s)").format(
                    table=self.table
                ),
                [list(keys)],
            )
            return {keys[bytes(key)]: row for key, row in cursor.fetchall()}

    def add(self, first_rows: Mapping[str, int]) -> None:
        """Record the ids a chunk used first (none of them recorded yet)."""
        if not first_rows:
            return
        with connection.cursor() as cursor:
            cursor.execute(
                sql.SQL(
                    "INSERT INTO {table} (key, row) SELECT * FROM unnest(%s::bytea[], %s::int[])"
                ).format(table=self.table),
                [list(map(_id_key, first_rows)), list(first_rows.values())],
            )

    def close(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql.SQL("DROP TABLE IF EXISTS {table}").format(table=self.table))


class ImportRun:
    """The state of one job's import across its chunks."""

    def __init__(
        self,
        *,
        job: ImportJob,
        dataset: Dataset,
        source: OpenedSource,
        by: User | None,
        track_media_owners: bool,
        attempt: int | None = None,
        resume: Counts | None = None,
    ) -> None:
        self.job, self.dataset, self.source, self.by = job, dataset, source, by
        self.checker = RowChecker.for_dataset(dataset.kind, taxonomy_view(dataset))
        # The counts an earlier attempt committed: its rows are read again, to rebuild what
        # later rows refer to, but neither stored nor counted twice.
        self.counts = resume or Counts()
        self.committed_rows = self.counts.rows_done
        self.rows_read = 0
        # Every chunk's writes are fenced by the claim's attempt (core.jobs).
        self.attempt = attempt
        # The ids of earlier chunks (in the database) and of this chunk (here).
        self.seen_ids = SeenIds(job.pk)
        self.first_row: dict[str, int] = {}
        self.earlier_rows: dict[str, int] = {}
        # VLMEvalKit rows reuse an earlier row's image: external id -> its media.
        self.track_media_owners = track_media_owners
        self.media_of: dict[str, list[Media]] = {}
        self.pairs: list[tuple[str, str]] = []
        # (licence, source URL) of the stored assets the chunk's rows use, by hash, as
        # re-imports leave them: read again for each chunk, so that it holds one chunk's
        # assets, never the whole source's.
        self.provenance: dict[str, tuple[str, str]] = {}
        # The samples this run changed (labels, media, status, gold flag): what the end of
        # the import refreshes, in place of the whole dataset.
        self.changed_ids: set[int] = set()
        # What the format's after-step did (Label Studio's reviews and verdicts).
        self.notes: list[str] = []
        self.reason = _("Import job #%(job)s") % {"job": job.pk}

    # -- checking ------------------------------------------------------------------------

    def _read_media(self, parsed: ParsedSample) -> list[Media]:
        """The row's media with their bytes and hashes; MediaMissing explains a failure."""
        media: list[Media] = []
        for ref in sorted(parsed.media, key=lambda r: (r.role, r.position)):
            if ref.problem is not None:
                raise MediaMissing(ref.problem)
            if ref.same_as is not None:
                owned = self.media_of.get(ref.same_as)
                if owned is None:
                    raise MediaMissing(
                        _("the image is the one of the row '%(id)s', which could not be imported")
                        % {"id": ref.same_as}
                    )
                media.extend(Media(m.role, m.position, m.sha, path=m.path) for m in owned)
                continue
            if ref.data is not None:
                data = ref.data
            elif ref.path:
                data = self.source.read_media(ref.path, media_max_bytes(ref.role))
            else:
                raise MediaMissing(_("a media entry has neither data nor a path"))
            media.append(
                Media(
                    ref.role,
                    ref.position,
                    sha256_hex(data),
                    data,
                    ref.path or "",
                    licence=ref.licence or parsed.licence,
                )
            )
        # Positions within each role, as SampleMedia stores them; the row's source is each
        # medium's, and its licence where the medium names none.
        positions: dict[str, int] = {}
        for item in media:
            item.position = positions[item.role] = positions.get(item.role, -1) + 1
            item.licence = (item.licence or parsed.licence)[:200]
            item.source_url = parsed.source_url[:1000]
        return media

    def _prepare(
        self,
        parsed: ParsedSample,
        checked: list[str] | None,
        errors: list[RowError],
        encoded: Encoded | None = None,
    ) -> Row | None:
        """The row with its media read and every problem found; None for a repeated id.

        ``checked`` holds the row's problems when the reader checked it already, ``encoded``
        its JSON texts when the reader encoded them.
        """
        external_id = parsed.external_id
        first = self.earlier_rows.get(external_id)
        if first is None:
            first = self.first_row.get(external_id)
        if first is not None:
            errors.append(
                RowError(
                    parsed.row,
                    external_id,
                    _("the id '%(id)s' was already used by row %(row)s of this file")
                    % {"id": external_id, "row": first},
                )
            )
            return None
        self.first_row[external_id] = parsed.row
        if checked is None:
            checked = self.checker.problems(parsed)
        problems = [*parsed.problems, *checked]
        media: list[Media] = []
        try:
            media = self._read_media(parsed)
        except MediaMissing as exc:
            problems.append(exc.message)
        if not problems and self.track_media_owners and any(m.data is not None for m in media):
            # Registered now, so later rows of the same chunk can reuse the image.
            self.media_of[external_id] = [
                Media(m.role, m.position, m.sha, path=m.path) for m in media
            ]
        values = {name: getattr(parsed, name) for name in LABEL_FIELDS}
        if encoded is None:
            key = import_question_key(parsed.question, parsed.speech_utterance)
            return Row(parsed, media, values, problems, question_key=key)
        return Row(
            parsed,
            media,
            values,
            problems,
            values_json=encoded.values,
            json=encoded.fields,
            question_key=encoded.question_key,
        )

    # -- a chunk ---------------------------------------------------------------------------

    def process(self, chunk: Chunk) -> None:
        """Check, store and count one chunk of rows, in one transaction."""
        errors: list[RowError] = []
        rows: list[Row] = []
        seen = 0
        self.earlier_rows = self.seen_ids.first_rows(
            item.external_id for item in chunk.items if isinstance(item, ParsedSample)
        )
        self.first_row = {}
        for item, checked, encoded in zip(chunk.items, chunk.problems, chunk.encoded, strict=True):
            seen += 1
            if isinstance(item, RowError):
                errors.append(item)
            elif (row := self._prepare(item, checked, errors, encoded)) is not None:
                rows.append(row)
        self.seen_ids.add(self.first_row)
        self.rows_read += seen
        replay = self.rows_read <= self.committed_rows

        stored = MediaAsset.objects.filter(
            AnyOf(F("sha256"), {m.sha for row in rows for m in row.media})
        ).values_list("sha256", "kind", "licence", "source_url", "phash")
        known: dict[str, str] = {}
        phashes: dict[str, int | None] = {}
        self.provenance = {}
        for sha, kind, licence, source_url, phash in stored:
            known[sha] = kind
            self.provenance[sha] = (licence, source_url)
            phashes[sha] = phash
        new_assets = self._inspect_new_media(rows, known, chunk.media)
        phashes.update((sha, a.fields.get("phash")) for sha, a in new_assets.items())
        for row in rows:
            if row.problems:
                external_id = row.parsed.external_id
                errors.append(RowError(row.parsed.row, external_id, "; ".join(row.problems)))
                self.media_of.pop(external_id, None)
        rows = [row for row in rows if not row.problems]
        for row in rows:
            row.values_json = row.values_json or sample_values_json(row.values)
            row.content_hash = sample_content_hash_of_json(
                row.values_json, (m.sha for m in row.media), sample_custom_json(row.parsed.extra)
            )
            if row.parsed.pair_external_id:
                self.pairs.append((row.parsed.external_id, row.parsed.pair_external_id))
        if replay:
            return

        existing = {
            s.external_id: s
            for s in Sample.objects.filter(
                AnyOf(F("external_id"), [r.parsed.external_id for r in rows]), dataset=self.dataset
            ).only("id", "external_id", "content_hash", "status", "extra", *LABEL_FIELDS)
        }
        versions = {
            v.sample_id: v
            for v in ImportedVersion.objects.filter(
                AnyOf(F("sample_id"), [s.pk for s in existing.values()])
            )
        }
        fresh: list[Row] = []
        changed: list[tuple[Row, Sample]] = []
        # Unchanged rows of samples with no imported version yet: it is recorded now.
        unrecorded: list[tuple[Row, Sample]] = []
        for r in rows:
            sample = existing.get(r.parsed.external_id)
            if sample is None:
                fresh.append(r)
                continue
            if sample.status == SampleStatus.REMOVED:
                continue
            version = versions.get(sample.pk)
            if (sample.content_hash if version is None else version.content_hash) != (
                r.content_hash
            ) or provenance_changed(r.media, self.provenance):
                changed.append((r, sample))
            elif version is None:
                unrecorded.append((r, sample))
        # Only the media of rows that will be written are stored.
        needed = {m.sha for r in (*fresh, *(r for r, _s in changed)) for m in r.media}
        new_assets = {sha: a for sha, a in new_assets.items() if sha in needed}
        # The files are written by threads while the rows are inserted; the transaction
        # commits only once every file is stored, and a failure deletes the ones written.
        with media_files_storing(new_assets) as files:
            kept = existing_rows(rows, existing, besides={s.pk for _r, s in changed})
            self._write_chunk(
                _Plan(
                    new_assets,
                    needed,
                    fresh,
                    changed,
                    unrecorded,
                    versions,
                    errors,
                    seen,
                    gold_flags=[(r.parsed.extra, s) for r, s in kept],
                    phashes=phashes,
                ),
                files,
                kept=len(rows),
            )

    def _write_chunk(self, plan: _Plan, files: FileWrites, *, kept: int) -> None:
        """Insert a chunk's rows and count them, in one transaction."""
        new_assets, needed, fresh = plan.new_assets, plan.needed, plan.fresh
        versions, errors = plan.versions, plan.errors
        with transaction.atomic():
            _commit_without_waiting()
            media_assets_insert(new_assets, files)
            asset_ids = dict(
                MediaAsset.objects.filter(AnyOf(F("sha256"), needed)).values_list("sha256", "id")
            )
            created = create_samples(
                fresh,
                asset_ids,
                dataset_id=self.dataset.pk,
                by_id=self.by.pk if self.by is not None else None,
                reason=self.reason,
            )
            record_new_versions(fresh, created, job_id=self.job.pk)
            if import_finds_duplicates():
                duplicates_record_new(
                    dataset_id=self.dataset.pk,
                    new=[
                        Keyed(sample_id, row.question_key, _first_image_hash(row, plan.phashes))
                        for sample_id, row in zip(created, fresh, strict=True)
                    ],
                    job_id=self.job.pk,
                )
            recorded: list[tuple[Row, Sample, list[dict[str, Any]]]] = [
                (r, s, []) for r, s in plan.unrecorded
            ]
            updated = 0
            for r, sample in plan.changed:
                outcome = apply_row(
                    sample=sample,
                    version=versions.get(sample.pk),
                    values=r.values,
                    media=r.slots,
                    extra=r.parsed.extra,
                    stated={m.sha: (m.licence, m.source_url) for m in r.media},
                    held=self.provenance,
                    asset_ids=asset_ids,
                    job_id=self.job.pk,
                    by=self.by,
                    reason=self.reason,
                )
                updated += outcome.updated
                self.counts.adjudication += outcome.to_adjudication
                recorded.append((r, sample, outcome.conflicts))
                self.changed_ids.add(sample.pk)
            self._record_versions(recorded)
            self.changed_ids.update(gold_flags_refresh(plan.gold_flags))
            row_errors_insert(self.job.pk, errors)
            files.wait()  # a file that could not be stored fails the chunk
            counts = self.counts
            counts.rows_done += plan.seen
            counts.imported += len(fresh)
            counts.updated += updated
            counts.unchanged += kept - len(fresh) - updated
            counts.rejected += len(errors)
            mine = ImportJob.objects.filter(pk=self.job.pk)
            if self.attempt is not None:
                mine = mine.filter(status=JobStatus.RUNNING, attempts=self.attempt)
            if not mine.update(**counts.fields(), heartbeat_at=timezone.now()):
                raise JobStopped
            stored = [asset_ids[sha] for sha in new_assets if sha in asset_ids]
            if stored:
                transaction.on_commit(lambda: media_derive_send(stored))

    def _record_versions(self, recorded: list[tuple[Row, Sample, list[dict[str, Any]]]]) -> None:
        """Keep each written row as the sample's imported version, for the next re-import."""
        if not recorded:
            return
        ImportedVersion.objects.bulk_create(
            (
                ImportedVersion(
                    sample_id=sample.pk,
                    job_id=self.job.pk,
                    content_hash=row.content_hash,
                    values=row.values,
                    media=row.slots,
                    conflicts=conflicts,
                )
                for row, sample, conflicts in recorded
            ),
            update_conflicts=True,
            unique_fields=["sample"],
            update_fields=["job", "content_hash", "values", "media", "conflicts", "updated_at"],
        )

    def _inspect_new_media(
        self, rows: list[Row], known: Mapping[str, str], decoded: Mapping[str, Inspected]
    ) -> dict[str, NewAsset]:
        """Decode every media file not stored yet (unless the reader ``decoded`` it); a file
        that fails is a problem of its row. Returns the new assets by hash.
        """
        assets: dict[str, NewAsset] = {}
        failed: dict[str, str] = {}
        inspection = MediaInspection(perceptual_hash=import_finds_duplicates())
        for row in rows:
            for media in row.media:
                kind = known.get(media.sha) or (
                    assets[media.sha].kind if media.sha in assets else None
                )
                problem = failed.get(media.sha)
                if problem is None and kind is None and media.data is not None:
                    found = decoded.get(media.sha)
                    if found is None or found.role != media.role:
                        try:
                            found = Inspected(
                                media.role, inspection.inspect(media.role, media.data)
                            )
                        except MediaError as exc:
                            found = Inspected(media.role, None, exc.message)
                    fields = found.fields
                    if fields is None:
                        problem = failed[media.sha] = found.problem
                    else:
                        kind = media.role
                        assets[media.sha] = NewAsset(
                            media.role,
                            media.data,
                            fields,
                            media.source_url,
                            media.licence,
                        )
                if problem is None and kind is None:
                    problem = _("the file could not be read")
                if problem is None and kind is not None and kind != media.role:
                    problem = _("the file is stored already as %(kind)s, not as %(role)s") % {
                        "kind": MediaKind(kind).label,
                        "role": MediaRole(media.role).label,
                    }
                if problem is not None:
                    row.problems.append(f"{_media_label(media)}: {problem}")
                    break
        inspection.hash_pending()
        return assets

    def close(self) -> None:
        """Drop what the run kept in the database for itself (a lost connection took it)."""
        with contextlib.suppress(DatabaseError):
            self.seen_ids.close()

    def changed_sample_ids(self, *, whole_dataset: bool = False) -> list[int] | None:
        """The samples this import changed, for what runs at its end; None (any may have)
        when an earlier attempt committed chunks whose changes this one did not see, or when
        ``whole_dataset`` (a format's after-step writes beyond the rows)."""
        if whole_dataset or self.committed_rows:
            return None
        return sorted(self.changed_ids)

    # -- writing ---------------------------------------------------------------------------

    def link_pairs(self) -> None:
        """Pair tri-modal scenarios with their safe/unsafe twins once every row is in."""
        if not self.pairs:
            return
        ids = {eid for pair in self.pairs for eid in pair}
        samples = {
            s.external_id: s
            for s in Sample.objects.filter(dataset=self.dataset, external_id__in=ids).only(
                "id", "external_id", "pair_id", "safety_label", "dataset_id"
            )
        }
        done: set[frozenset[str]] = set()
        for one, other in self.pairs:
            key = frozenset((one, other))
            if key in done or one == other:
                continue
            done.add(key)
            first, second = samples.get(one), samples.get(other)
            if first is None or second is None:
                self.counts.unpaired.append(one)
                continue
            if first.pair_id == second.pk and second.pair_id == first.pk:
                continue
            unsafe, safe = (
                (first, second) if first.safety_label == SafetyLabel.UNSAFE else (second, first)
            )
            sample_link_pair(unsafe=unsafe, safe=safe)
            # Keep the loaded rows in step with what sample_link_pair changed.
            for sample in samples.values():
                if sample.pair_id in (unsafe.pk, safe.pk) and sample not in (unsafe, safe):
                    sample.pair_id = None
            unsafe.pair_id, safe.pair_id = safe.pk, unsafe.pk
