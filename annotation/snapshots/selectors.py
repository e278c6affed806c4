"""Reads for release snapshots: the samples a filter selects (in id-ordered chunks, media and
history prefetched), snapshot listings, diffs against the previous snapshot, download links.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core import signing
from django.core.files.storage import default_storage
from django.db.models import Exists, F, OuterRef, QuerySet
from django.urls import reverse

from annotation import models
from annotation.models import (
    Dataset,
    Sample,
    SampleStatus,
    Snapshot,
    SnapshotEntry,
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


def snapshot_diff(*, snapshot: Snapshot, previous: Snapshot) -> Diff:
    """Added, removed and changed samples by external id, counted in the database."""
    new = SnapshotEntry.objects.filter(snapshot=snapshot)
    old = SnapshotEntry.objects.filter(snapshot=previous)
    in_old = old.filter(external_id=OuterRef("external_id"))
    in_new = new.filter(external_id=OuterRef("external_id"))
    added = new.exclude(Exists(in_old))
    removed = old.exclude(Exists(in_new))
    changed = new.filter(Exists(in_old.exclude(content_hash=OuterRef("content_hash"))))
    taken_down = removed.filter(sample__status=SampleStatus.REMOVED)

    def ids(entries: QuerySet[SnapshotEntry], limit: int = DIFF_EXAMPLES) -> list[str]:
        return list(entries.order_by("external_id").values_list("external_id", flat=True)[:limit])

    total_new = new.count()
    changed_count = changed.count()
    added_count = added.count()
    return Diff(
        added=added_count,
        removed=removed.count(),
        changed=changed_count,
        unchanged=total_new - added_count - changed_count,
        taken_down=ids(taken_down, TAKEDOWN_LIST_MAX),
        examples={"added": ids(added), "removed": ids(removed), "changed": ids(changed)},
    )


def snapshot_list(*, dataset: Dataset) -> QuerySet[Snapshot]:
    return (
        Snapshot.objects.filter(dataset=dataset)
        .select_related("created_by", "previous")
        .order_by("-created_at", "-pk")
    )


def snapshot_get_for_lead(*, user: AnyUser, snapshot_id: int) -> Snapshot | None:
    """A snapshot, for leads only (nobody else may see or download releases)."""
    if not user.is_authenticated or not is_lead(user):
        return None
    return Snapshot.objects.select_related("dataset", "previous").filter(pk=snapshot_id).first()


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
