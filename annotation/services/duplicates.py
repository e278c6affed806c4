"""Possible duplicates: recorded for an import's new samples, and rebuilt for a dataset (with
the perceptual hashes and text keys of data stored before they were kept).

What counts as a duplicate is annotation.duplicates.duplicate_pairs; this module only finds
the candidates and stores the pairs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction

from annotation.duplicates import (
    HashInput,
    Keyed,
    duplicate_pairs,
    image_hash_input,
    phashes_of,
)
from annotation.models import DuplicatePair, MediaAsset, MediaKind, Sample
from annotation.selectors import sample_duplicate_keys
from annotation.services.samples import sample_question_key

REFRESH_BATCH = 500


def import_finds_duplicates() -> bool:
    """Whether an import hashes its new images, keys its questions and records the possible
    duplicates it finds (``settings.IMPORT_FIND_DUPLICATES``, on by default)."""
    return bool(settings.IMPORT_FIND_DUPLICATES)


def import_question_key(question: str, speech_utterance: str) -> int | None:
    """An imported row's text key, None when imports find no duplicates (the command
    ``duplicate_keys_refresh`` keys such rows later)."""
    if not import_finds_duplicates():
        return None
    return sample_question_key(question, speech_utterance)


def duplicates_record_new(*, dataset_id: int, new: Sequence[Keyed], job_id: int | None) -> int:
    """Pair each new sample (``new``, in the order it was stored, already in the table) with
    the first sample stored before it that it duplicates: from the same file or the dataset's
    earlier ones. One query for the candidates, one insert when any pair is found; the pairs
    stored."""
    keys = {item.question for item in new if isinstance(item.question, int)}
    if not keys:
        return 0
    fresh = {item.ident for item in new if isinstance(item.ident, int)}
    stored = sample_duplicate_keys(dataset_id=dataset_id, question_keys=keys, besides=fresh)
    pairs = [
        DuplicatePair(
            dataset_id=dataset_id,
            original_id=first,
            sample_id=later,
            image_distance=distance,
            job_id=job_id,
        )
        for first, later, distance in duplicate_pairs([*stored, *new])
        if later in fresh
    ]
    DuplicatePair.objects.bulk_create(pairs, ignore_conflicts=True)
    return len(pairs)


@dataclass
class Refreshed:
    """What ``duplicates_refresh`` did."""

    images_hashed: int = 0
    samples_keyed: int = 0
    pairs_added: int = 0
    pairs_removed: int = 0


def _batches(ids: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), REFRESH_BATCH):
        yield ids[start : start + REFRESH_BATCH]


def media_phashes_refresh(*, only_missing: bool = True) -> int:
    """Hash the stored images that have no perceptual hash yet (every image unless
    ``only_missing``), reading each file once; one UPDATE per batch. The images hashed."""
    images = MediaAsset.objects.filter(kind=MediaKind.IMAGE)
    if only_missing:
        images = images.filter(phash__isnull=True)
    hashed = 0
    for batch in _batches(list(images.order_by("pk").values_list("pk", flat=True))):
        assets = list(MediaAsset.objects.filter(pk__in=batch).only("id", "file", "phash"))
        reduced: list[tuple[MediaAsset, HashInput]] = []
        for asset in assets:
            asset.phash = None
            with default_storage.open(asset.file.name, "rb") as handle:
                found = image_hash_input(handle.read())
            if found is not None:
                reduced.append((asset, found))
        # One stacked product per batch, as an import hashes its chunks.
        hashes = phashes_of([pixels for _asset, pixels in reduced])
        for (asset, _pixels), phash in zip(reduced, hashes, strict=True):
            asset.phash = phash
        MediaAsset.objects.bulk_update(assets, ["phash"])
        hashed += sum(asset.phash is not None for asset in assets)
    return hashed


def sample_question_keys_refresh(*, dataset_id: int) -> int:
    """Set the text key of every sample of a dataset whose key is not what its text gives
    now (data stored before keys were kept); one UPDATE per batch. The samples changed."""
    changed: list[Sample] = []
    for sample in (
        Sample.objects.filter(dataset_id=dataset_id)
        .only("id", "question", "speech_utterance", "question_key")
        .iterator(chunk_size=2000)
    ):
        key = sample_question_key(sample.question, sample.speech_utterance)
        if key != sample.question_key:
            sample.question_key = key
            changed.append(sample)
    Sample.objects.bulk_update(changed, ["question_key"], batch_size=REFRESH_BATCH)
    return len(changed)


@transaction.atomic
def duplicates_rebuild(*, dataset_id: int) -> tuple[int, int]:
    """Make a dataset's pairs what its samples' keys give now: pairs no longer found are
    removed, new ones added (with no job); a pair an import found and that still holds keeps
    its job. Returns (added, removed)."""
    found = {
        (first, later): distance
        for first, later, distance in duplicate_pairs(sample_duplicate_keys(dataset_id=dataset_id))
    }
    current = {
        (o, s): pk
        for pk, o, s in DuplicatePair.objects.filter(dataset_id=dataset_id).values_list(
            "pk", "original_id", "sample_id"
        )
    }
    stale = [pk for key, pk in current.items() if key not in found]
    DuplicatePair.objects.filter(pk__in=stale).delete()
    added = [
        DuplicatePair(dataset_id=dataset_id, original_id=o, sample_id=s, image_distance=distance)
        for (o, s), distance in found.items()
        if (o, s) not in current
    ]
    DuplicatePair.objects.bulk_create(added, ignore_conflicts=True)
    return len(added), len(stale)


def duplicates_refresh(*, dataset_ids: Sequence[int], rehash: bool = False) -> Refreshed:
    """Compute the hashes and keys missing from stored data (every image's hash again with
    ``rehash``) and rebuild the datasets' possible duplicates."""
    result = Refreshed(images_hashed=media_phashes_refresh(only_missing=not rehash))
    for dataset_id in dataset_ids:
        result.samples_keyed += sample_question_keys_refresh(dataset_id=dataset_id)
        added, removed = duplicates_rebuild(dataset_id=dataset_id)
        result.pairs_added += added
        result.pairs_removed += removed
    return result
