"""Reads for release snapshots: the samples a filter selects (in id-ordered chunks, media and
history prefetched), snapshot listings, comparisons of two snapshots, download links.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core import signing
from django.core.files.storage import default_storage
from django.db.models import F, QuerySet
from django.db.models.functions import Collate
from django.urls import reverse

from annotation import models
from annotation.models import (
    Dataset,
    Sample,
    SampleStatus,
    Snapshot,
    SnapshotContent,
    SnapshotEntry,
)
from annotation.selectors import dataset_visible
from annotation.snapshots.comparison import (
    Entry,
    EntryDiff,
    FieldChange,
    entry_diff,
    field_changes,
)
from annotation.snapshots.exports.manifest import Diff
from annotation.snapshots.exports.records import LABEL_FIELD_NAMES
from core.roles import is_lead

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

    AnyUser = User | AnonymousUser

# Filter keys and the sample field each one selects on.
FILTER_FIELDS = {
    "groups": "answerability_group",
    "categories": "category_code",
    "formats": "question_format",
    "scenarios": "scenario",
    "splits": "split",
}
DIFF_EXAMPLES = 50
# The comparison page: ids listed of each kind (the rest counted), changed samples per page.
COMPARE_LIST_MAX = 200
COMPARE_PAGE = 50
ENTRY_CHUNK = 5000
TAKEDOWN_LIST_MAX = 10_000
_SIGNING_SALT = "annotation.snapshot-download"


def snapshot_samples(*, dataset: Dataset, filter: dict[str, Any]) -> QuerySet[Sample]:
    """The samples a snapshot filter selects; removed samples never, whatever the filter."""
    samples = (
        Sample.objects.filter(dataset=dataset, status__in=filter["statuses"])
        .exclude(status=SampleStatus.REMOVED)
        .order_by("id")
    )
    for key, field in FILTER_FIELDS.items():
        if filter.get(key):
            samples = samples.filter(**{f"{field}__in": filter[key]})
    return samples


@dataclass(frozen=True)
class ExportChunk:
    """Up to ``chunk_size`` samples as plain values, with their media and history by id."""

    samples: list[dict[str, Any]]
    media: dict[int, list[dict[str, Any]]]
    revisions: dict[int, list[dict[str, Any]]]
    notes: dict[int, dict[str, Any]]


_SAMPLE_VALUES = ("id", "external_id", "status", "revision", "content_hash", "extra")
_MEDIA_VALUES = (
    "sample_id",
    "role",
    "position",
    "asset__sha256",
    "asset__mime_type",
    "asset__file",
    "asset__licence",
    "asset__source_url",
)
_REVISION_VALUES = ("sample_id", "number", "source", "changed_at", "changed_by__username")


def snapshot_sample_chunks(
    *, dataset: Dataset, filter: dict[str, Any], chunk_size: int
) -> Iterator[ExportChunk]:
    """Selected samples in id order, ``chunk_size`` at a time, in three queries per chunk.

    Keyset pagination (id > last id) keeps each query cheap however deep the export is; plain
    values rather than model instances keep the per-sample cost low.
    """
    base = (
        snapshot_samples(dataset=dataset, filter=filter)
        .annotate(pair_external_id=F("pair__external_id"))
        .values(*_SAMPLE_VALUES, "pair_external_id", *sorted(LABEL_FIELD_NAMES))
    )
    last_id = 0
    while True:
        samples = list(base.filter(id__gt=last_id)[:chunk_size])
        if not samples:
            return
        ids = [row["id"] for row in samples]
        media: dict[int, list[dict[str, Any]]] = defaultdict(list)
        links = models.SampleMedia.objects.filter(sample_id__in=ids).order_by(
            "sample_id", "role", "position"
        )
        for link in links.values(*_MEDIA_VALUES):
            media[link["sample_id"]].append(link)
        revisions: dict[int, list[dict[str, Any]]] = defaultdict(list)
        history = models.SampleRevision.objects.filter(sample_id__in=ids).order_by(
            "sample_id", "number"
        )
        for revision in history.values(*_REVISION_VALUES):
            revisions[revision["sample_id"]].append(revision)
        notes: dict[int, dict[str, Any]] = defaultdict(dict)
        for sample_id, key, value in models.SampleNote.objects.filter(
            sample_id__in=ids
        ).values_list("sample_id", "key", "value"):
            notes[sample_id][key] = value
        yield ExportChunk(samples=samples, media=media, revisions=revisions, notes=notes)
        last_id = ids[-1]


def snapshot_option_labels(*, dataset: Dataset, filter: dict[str, Any]) -> list[str]:
    """Every option letter the selected samples use (the VLMEvalKit TSV's columns)."""
    labels: set[str] = set()
    options = snapshot_samples(dataset=dataset, filter=filter).values_list("options", flat=True)
    for value in options.iterator(chunk_size=2000):
        for item in value or []:
            if isinstance(item, dict) and item.get("label"):
                labels.add(str(item["label"]))
    return sorted(labels)


# Notes other apps keep in ``extra``; the exports carry them in their own columns.
NOTE_KEYS = frozenset({"review_summary", "judge_votes"})


def snapshot_extra_keys(*, dataset: Dataset, filter: dict[str, Any]) -> list[str]:
    """The custom fields (``extra`` keys) of the selected samples, in order of first use:
    the extra columns of the TSV and of the MMOOC layout."""
    keys: dict[str, None] = {}
    extras = snapshot_samples(dataset=dataset, filter=filter).order_by("id")
    for value in extras.values_list("extra", flat=True).iterator(chunk_size=2000):
        if isinstance(value, dict):
            keys.update(dict.fromkeys(k for k in value if k not in NOTE_KEYS))
    return list(keys)


def snapshot_previous(*, snapshot: Snapshot) -> Snapshot | None:
    """The dataset's latest finished snapshot before this one: what its diff compares with."""
    return (
        Snapshot.objects.filter(dataset_id=snapshot.dataset_id, status=models.JobStatus.SUCCEEDED)
        .exclude(pk=snapshot.pk)
        .filter(created_at__lte=snapshot.created_at)
        .order_by("-finished_at", "-pk")
        .first()
    )


def snapshot_entries(*, snapshot: Snapshot) -> Iterator[Entry]:
    """A snapshot's entries in code-point order of external id (``COLLATE "C"``, the order
    ``entry_diff`` merges in), streamed through a server-side cursor: one query however many
    there are, and memory that does not grow with them."""
    rows = (
        SnapshotEntry.objects.filter(snapshot=snapshot)
        .order_by(Collate(F("external_id"), "C"))
        .values_list("external_id", "content_hash", "sample__status")
    )
    for external_id, content_hash, status in rows.iterator(chunk_size=ENTRY_CHUNK):
        yield Entry(external_id, content_hash, status == SampleStatus.REMOVED)


def snapshot_diff(*, snapshot: Snapshot, previous: Snapshot) -> Diff:
    """Added, removed and changed samples by external id since ``previous``: the manifest's."""
    diff = entry_diff(
        snapshot_entries(snapshot=previous),
        snapshot_entries(snapshot=snapshot),
        keep=DIFF_EXAMPLES,
        taken_down_keep=TAKEDOWN_LIST_MAX,
    )
    return Diff(
        added=diff.added,
        removed=diff.removed,
        changed=diff.changed,
        unchanged=diff.unchanged,
        taken_down=diff.taken_down_ids,
        examples={
            "added": diff.added_ids,
            "removed": diff.removed_ids,
            "changed": [change.external_id for change in diff.changes],
        },
    )


@dataclass(frozen=True)
class ChangedSample:
    """A sample whose content changed; ``fields`` None when either snapshot was built before
    contents were kept (only the content hash is known then)."""

    external_id: str
    fields: list[FieldChange] | None


@dataclass(frozen=True)
class SnapshotComparison:
    """What changed from ``against`` to ``snapshot``: counts, the first ids of each kind and
    one page of changed samples with their fields."""

    snapshot: Snapshot
    against: Snapshot
    diff: EntryDiff
    changed: list[ChangedSample]
    page: int
    pages: int

    @property
    def list_max(self) -> int:
        return COMPARE_LIST_MAX


def snapshot_compare(
    *, snapshot: Snapshot, against: Snapshot, page: int = 1, page_size: int = COMPARE_PAGE
) -> SnapshotComparison:
    """Compare two snapshots of a dataset in three queries: both entry streams, merged in
    Python, and the contents of the changed samples on the page."""
    page = max(1, page)
    diff = entry_diff(
        snapshot_entries(snapshot=against),
        snapshot_entries(snapshot=snapshot),
        keep=COMPARE_LIST_MAX,
        changed_from=(page - 1) * page_size,
        changed_keep=page_size,
    )
    hashes = {h for change in diff.changes for h in (change.old_hash, change.new_hash)}
    contents: dict[str, dict[str, Any]] = dict(
        SnapshotContent.objects.filter(content_hash__in=hashes).values_list(
            "content_hash", "fields"
        )
        if hashes
        else []
    )
    changed = []
    for change in diff.changes:
        old, new = contents.get(change.old_hash), contents.get(change.new_hash)
        fields = None if old is None or new is None else field_changes(old, new)
        changed.append(ChangedSample(change.external_id, fields))
    return SnapshotComparison(
        snapshot=snapshot,
        against=against,
        diff=diff,
        changed=changed,
        page=page,
        pages=max(1, -(-diff.changed // page_size)),
    )


def snapshot_sample_ids(*, dataset_id: int, external_ids: Iterable[str]) -> dict[str, int]:
    """The dataset's samples among the named external ids, by external id: the links of a
    comparison's ids to the samples' pages (one query)."""
    wanted = set(external_ids)
    if not wanted:
        return {}
    samples = Sample.objects.filter(dataset_id=dataset_id, external_id__in=wanted)
    return dict(samples.values_list("external_id", "id"))


def snapshot_compare_choices(*, snapshot: Snapshot) -> QuerySet[Snapshot]:
    """The other finished snapshots of the dataset, newest first: what it may be compared with."""
    return (
        Snapshot.objects.filter(dataset_id=snapshot.dataset_id, status=models.JobStatus.SUCCEEDED)
        .exclude(pk=snapshot.pk)
        .only("id", "name", "created_at")
        .order_by("-created_at", "-pk")
    )


def snapshot_get_against(*, snapshot: Snapshot, against_id: int) -> Snapshot | None:
    """Another finished snapshot of the same dataset (None for one of another dataset)."""
    return snapshot_compare_choices(snapshot=snapshot).filter(pk=against_id).first()


def snapshot_manifest_files(manifest: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The files a manifest lists besides the artifact, by name. A release of one file (JSON
    lines, Parquet, TSV) is its own artifact, and the manifest names it in both places."""
    artifact = manifest.get("artifact") or {}
    return [
        (name, info)
        for name, info in sorted((manifest.get("files") or {}).items())
        if (name, info.get("sha256")) != (artifact.get("name"), artifact.get("sha256"))
    ]


def snapshot_list(*, dataset: Dataset) -> QuerySet[Snapshot]:
    return (
        Snapshot.objects.filter(dataset=dataset)
        .select_related("created_by", "previous")
        .order_by("-created_at", "-pk")
    )


def snapshot_get_for_lead(*, user: AnyUser, snapshot_id: int) -> Snapshot | None:
    """A snapshot of a dataset the user sees, for leads only (nobody else may see or download
    releases)."""
    if not user.is_authenticated or not is_lead(user):
        return None
    return (
        Snapshot.objects.select_related("dataset", "previous")
        .filter(dataset_visible(user, "dataset"), pk=snapshot_id)
        .first()
    )


def snapshot_file_names(snapshot: Snapshot) -> dict[str, str]:
    """The downloadable files of a finished snapshot: the release and its manifest."""
    return snapshot.file_names


def download_seconds() -> int:
    return int(settings.S3_PRESIGN_SECONDS)


def snapshot_download_link(*, snapshot: Snapshot, which: str = "release") -> str | None:
    """A short-lived link to a snapshot file: S3's presigned URL, or a signed local URL.

    The local link carries a signature (django.core.signing) that expires after
    S3_PRESIGN_SECONDS, the same lifetime as a presigned S3 URL.
    """
    name = snapshot_file_names(snapshot).get(which)
    if name is None:
        return None
    if hasattr(default_storage, "bucket_name"):
        return str(default_storage.url(name))
    token = signing.dumps({"snapshot": snapshot.pk, "name": name}, salt=_SIGNING_SALT)
    return reverse("annotation:snapshot_file", kwargs={"token": token})


def snapshot_file_from_token(token: str) -> str | None:
    """The storage name a signed download token grants, or None if forged or expired."""
    try:
        data = signing.loads(token, salt=_SIGNING_SALT, max_age=download_seconds())
    except signing.BadSignature:  # SignatureExpired is a BadSignature
        return None
    snapshot = Snapshot.objects.filter(pk=data.get("snapshot")).first()
    if snapshot is None or data.get("name") not in snapshot_file_names(snapshot).values():
        return None
    return str(data["name"])
