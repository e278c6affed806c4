"""Media assets: checked, stored once per content hash, derived (thumbnail, peaks) by a worker.

One way of storing media serves every caller: an import chunk stores its new assets as a
batch (files written by a few threads while the rows are inserted) and a single upload is a
batch of one.
"""

from __future__ import annotations

import datetime as dt
import functools
import mimetypes
import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation import duplicates, media_checks
from annotation.models import MediaAsset, MediaKind
from core.bulk import rows_insert_new
from core.jobs import job_send
from core.tasks import enqueue

# The workbench shows an image from a display copy at most this many pixels on its longer side
# (larger than the viewer, which is at most about 1000 CSS pixels, on a screen of two device
# pixels per CSS pixel); an image no larger is shown as it is. "Full resolution" loads the original.
DISPLAY_SIZE = 2048
DISPLAY_QUALITY = 90
# Threads writing a batch's files: storage writes wait on the disk or the network, not the GIL.
STORE_THREADS = 8


def media_storage_name(*, kind: str, sha: str, mime: str) -> str:
    """Where the file of an asset with this content is stored."""
    ext = mimetypes.guess_extension(mime) or ".bin"
    return f"media/{kind}/{sha[:2]}/{sha}{ext}"


def media_max_bytes(kind: str) -> int:
    """The largest file accepted for a kind of media."""
    if kind == MediaKind.AUDIO:
        return int(settings.MEDIA_MAX_AUDIO_BYTES)
    return int(settings.MEDIA_MAX_IMAGE_BYTES)


class MediaInspection:
    """Media files checked one by one, the perceptual hashes of their images made together.

    ``inspect`` checks a file fully and gives the asset's fields at once, an image's
    ``phash`` None until ``hash_pending`` hashes every image inspected since its last call in
    one stacked product (``duplicates.phashes_of``): an import's chunk hashes its images so,
    at a fraction of the cost of one product per image.
    """

    def __init__(self, *, perceptual_hash: bool = True) -> None:
        self.perceptual_hash = perceptual_hash
        self._pending: list[tuple[dict[str, Any], duplicates.HashInput]] = []

    def inspect(self, kind: str, data: bytes) -> dict[str, Any]:
        """Check a file fully as ``kind`` (an image is decoded whole) and return the asset's
        fields; media_checks.MediaError says why the file cannot be used."""
        if kind == MediaKind.AUDIO:
            audio = media_checks.inspect_audio(data, max_bytes=settings.MEDIA_MAX_AUDIO_BYTES)
            return {
                "mime_type": audio.mime,
                "duration_seconds": audio.duration_seconds,
                "sample_rate": audio.sample_rate,
                "channels": audio.channels,
            }
        image = media_checks.inspect_image(
            data,
            max_bytes=settings.MEDIA_MAX_IMAGE_BYTES,
            max_pixels=settings.MEDIA_MAX_IMAGE_PIXELS,
            perceptual_hash=self.perceptual_hash,
        )
        fields: dict[str, Any] = {
            "mime_type": image.mime,
            "width": image.width,
            "height": image.height,
            "phash": None,
        }
        if image.hash_input is not None:
            self._pending.append((fields, image.hash_input))
        return fields

    def hash_pending(self) -> None:
        """Set the ``phash`` of every image inspected since the last call."""
        pending, self._pending = self._pending, []
        hashes = duplicates.phashes_of([reduced for _fields, reduced in pending])
        for (fields, _reduced), phash in zip(pending, hashes, strict=True):
            fields["phash"] = phash


def media_inspect(kind: str, data: bytes, *, perceptual_hash: bool = True) -> dict[str, Any]:
    """Check a file fully as ``kind`` (an image is decoded whole) and return the asset's
    fields, an image's perceptual hash unless ``perceptual_hash`` is false;
    media_checks.MediaError says why the file cannot be used."""
    inspection = MediaInspection(perceptual_hash=perceptual_hash)
    fields = inspection.inspect(kind, data)
    inspection.hash_pending()
    return fields


@dataclass
class NewAsset:
    """A checked media file that no asset holds yet: what storing it writes."""

    kind: str
    data: bytes
    fields: dict[str, Any]
    source_url: str = ""
    licence: str = ""


def _store_file(name: str, data: bytes) -> bool:
    """Store a media file under its content name; False when it was there already."""
    if isinstance(default_storage, FileSystemStorage):
        return _store_local(default_storage, name, data)
    if default_storage.exists(name):
        return False
    saved = default_storage.save(name, ContentFile(data))
    if saved != name:  # a concurrent writer won the name: keep one copy
        default_storage.delete(saved)
    return True


@functools.cache
def _umask() -> int | None:
    """The process's umask, read without changing it (Linux); None where it cannot be."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return None


def _narrowed(mode: int) -> bool:
    """Whether the umask takes permissions away from a file created with ``mode`` (then a
    chmod sets them; a metadata write saved on every file otherwise)."""
    umask = _umask()
    return umask is None or mode & umask != 0


def _store_local(storage: FileSystemStorage, name: str, data: bytes) -> bool:
    """On local disk: create the file exclusively (the name is its content's hash, so a file
    already there holds the same bytes) in three or four system calls, where the storage API
    checks for a free name and opens a Python file object."""
    path = storage.path(name)
    mode = storage.file_permissions_mode or 0o644
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        handle = os.open(path, flags, mode)
    except FileNotFoundError:  # the first file of its folder
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            handle = os.open(path, flags, mode)
        except FileExistsError:
            return False
    except FileExistsError:
        return False
    try:
        with memoryview(data) as view:
            written = 0
            while written < len(view):
                written += os.write(handle, view[written:])
        if storage.file_permissions_mode is not None and _narrowed(mode):
            os.fchmod(handle, storage.file_permissions_mode)
    except BaseException:
        os.close(handle)
        os.unlink(path)
        raise
    os.close(handle)
    return True


class FileWrites:
    """The files of a batch of new assets, stored by a few threads (a share each) while the
    caller inserts rows."""

    def __init__(self, pool: ThreadPoolExecutor, assets: Mapping[str, NewAsset]) -> None:
        self.names = {
            sha: media_storage_name(kind=a.kind, sha=sha, mime=a.fields["mime_type"])
            for sha, a in assets.items()
        }
        # Per hash: True once this batch wrote the file, False when it was there already.
        self.wrote: dict[str, bool] = {}
        items = [(sha, self.names[sha], a.data) for sha, a in assets.items()]
        shares = [items[k::STORE_THREADS] for k in range(STORE_THREADS)]
        self.futures = [pool.submit(self._store, share) for share in shares if share]

    def _store(self, share: list[tuple[str, str, bytes]]) -> None:
        for sha, name, data in share:
            self.wrote[sha] = _store_file(name, data)

    def wait(self) -> None:
        """Wait for every write; raise the first failure."""
        wait(self.futures)
        for future in self.futures:
            future.result()

    def written(self) -> list[tuple[str, str]]:
        """The (hash, name) of the files this batch wrote, once every write has ended."""
        wait(self.futures)
        return [(sha, self.names[sha]) for sha, wrote in self.wrote.items() if wrote]


@contextmanager
def media_files_storing(assets: Mapping[str, NewAsset]) -> Iterator[FileWrites]:
    """Write the files of new assets while the block runs (it inserts their rows with
    ``media_assets_insert`` and calls ``wait()`` before it commits); if the block fails, the
    files it wrote are deleted again unless an asset row (another writer's) owns them."""
    with ThreadPoolExecutor(max_workers=min(STORE_THREADS, max(len(assets), 1))) as pool:
        files = FileWrites(pool, assets)
        try:
            yield files
        except BaseException:
            media_files_sweep(files.written())
            raise


def media_assets_provenance_update(changes: Mapping[str, tuple[str, str]]) -> int:
    """Give assets (by hash) a new ``(licence, source URL)``, as a re-import states them;
    returns the assets changed. An asset is one file, so every sample showing it shows the
    new licence."""
    changed = 0
    for sha, (licence, source_url) in changes.items():
        changed += MediaAsset.objects.filter(sha256=sha).update(
            licence=licence[:200], source_url=source_url[:1000]
        )
    return changed


def media_assets_insert(assets: Mapping[str, NewAsset], files: FileWrites) -> None:
    """One row per new asset, in one statement (its file is being stored meanwhile)."""
    # Another writer may store the same content at the same time: the first row wins.
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


def media_files_sweep(written: list[tuple[str, str]]) -> None:
    """Delete files a failed batch wrote, unless an asset row (another writer's) owns them."""
    if not written:
        return
    owned = set(
        MediaAsset.objects.filter(sha256__in=[sha for sha, _name in written]).values_list(
            "sha256", flat=True
        )
    )
    for sha, name in written:
        if sha not in owned:
            default_storage.delete(name)


def media_asset_store(
    *, data: bytes, kind: str, source_url: str = "", licence: str = ""
) -> MediaAsset:
    """Check a media file and store it once per content; the same bytes give the same asset.

    Raises ValidationError with a readable message when the bytes are not acceptable media.
    Derivation (thumbnail, waveform peaks) is queued for a worker once the row is committed.
    """
    sha = media_checks.sha256_hex(data)
    existing = MediaAsset.objects.filter(sha256=sha).first()
    if existing is not None:
        return existing
    if kind not in MediaKind.values:
        raise ValidationError(f"Unknown media kind {kind!r}.", code="bad_kind")
    try:
        fields = media_inspect(kind, data)
    except media_checks.MediaError as exc:
        raise ValidationError(str(exc), code="bad_media") from exc
    new = {sha: NewAsset(kind, data, fields, source_url, licence)}
    with media_files_storing(new) as files, transaction.atomic():
        media_assets_insert(new, files)
        files.wait()
        asset = MediaAsset.objects.get(sha256=sha)
        # Deriving is safe to run twice: an asset a concurrent writer stored is left alone.
        transaction.on_commit(lambda: media_derive_send([asset.pk]))
    return asset


# Images a browser shows as they are: one that already fits the thumbnail box is its own
# thumbnail (re-encoding a 24×24 PNG costs more than it saves, and a file more to store).
OWN_THUMBNAIL_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")
THUMBNAIL_SIZE = 320


def media_derive_send(asset_ids: Sequence[int]) -> None:
    """Send the derivation of assets just stored (call on commit). A broker that does not
    take it is logged and left to ``media_derivations_sweep``, never an error of the write."""
    ids = list(asset_ids)
    job_send(lambda: enqueue("annotation.derive_media_assets", ids))


# An asset still underived this long after it was stored lost its derivation's message.
UNDERIVED_AFTER = dt.timedelta(minutes=5)
SWEEP_BATCH = 500


def media_derivations_sweep(*, now: dt.datetime | None = None) -> int:
    """Send again the derivation of assets stored more than ``UNDERIVED_AFTER`` ago and
    still underived (their message was lost: a broker down when it was sent, a restart of
    Redis), in batches; the assets sent (a partial index serves the query)."""
    before = (now or timezone.now()) - UNDERIVED_AFTER
    ids = list(
        MediaAsset.objects.filter(derived_at__isnull=True, created_at__lt=before)
        .order_by("pk")
        .values_list("pk", flat=True)[: SWEEP_BATCH * 20]
    )
    for start in range(0, len(ids), SWEEP_BATCH):
        media_derive_send(ids[start : start + SWEEP_BATCH])
    return len(ids)


def media_asset_derive(*, asset_id: int) -> MediaAsset | None:
    """Make an image's thumbnail (and display copy, when it is larger than DISPLAY_SIZE) or an
    audio clip's waveform peaks; safe to run twice."""
    media_assets_derive(asset_ids=[asset_id])
    return MediaAsset.objects.filter(pk=asset_id).first()


def _derive_one(asset: MediaAsset) -> dict[str, object]:
    """What deriving one asset sets on it (a thumbnail and display copy stored, or peaks, or
    the error)."""
    with default_storage.open(asset.file.name, "rb") as handle:
        data = handle.read()
    try:
        if asset.kind != MediaKind.IMAGE:
            return {"peaks": media_checks.waveform_peaks(data)}
        update: dict[str, object] = {
            "thumbnail": _store_derivative(
                asset, "thumbs", *media_checks.make_thumbnail(data, size=THUMBNAIL_SIZE)
            )
        }
        if max(asset.width or 0, asset.height or 0) > DISPLAY_SIZE:
            display = media_checks.make_thumbnail(data, size=DISPLAY_SIZE, quality=DISPLAY_QUALITY)
            update["display"] = _store_derivative(asset, "display", *display)
    except media_checks.MediaError as exc:
        return {"derive_error": str(exc)}
    return update


def media_assets_derive(*, asset_ids: Sequence[int]) -> int:
    """Derive a batch of assets (an import's chunk): thumbnails, display copies and waveform
    peaks, written with a few statements for the whole batch. Assets already derived are left
    alone; returns how many were derived now."""
    now = timezone.now()
    pending = MediaAsset.objects.filter(pk__in=list(asset_ids), derived_at__isnull=True)
    # Small images in a format browsers show are their own thumbnail (and, being smaller than
    # DISPLAY_SIZE, need no display copy): one UPDATE, no file read or written.
    own = pending.filter(
        kind=MediaKind.IMAGE,
        width__lte=THUMBNAIL_SIZE,
        height__lte=THUMBNAIL_SIZE,
        mime_type__in=OWN_THUMBNAIL_MIMES,
    ).update(thumbnail=F("file"), derived_at=now, derive_error="")
    assets = list(pending.only("id", "sha256", "kind", "file", "width", "height"))
    fields = ["thumbnail", "display", "peaks", "derived_at", "derive_error"]
    for asset in assets:
        # Every updated field set, so that none is loaded (deferred) one asset at a time.
        update: dict[str, object] = {
            "thumbnail": "",
            "display": "",
            "peaks": None,
            "derived_at": now,
            "derive_error": "",
        }
        update |= _derive_one(asset)
        for name, value in update.items():
            setattr(asset, name, value)
    MediaAsset.objects.bulk_update(assets, fields, batch_size=200)
    return own + len(assets)


def _store_derivative(asset: MediaAsset, folder: str, data: bytes, mime: str) -> str:
    ext = mimetypes.guess_extension(mime) or ".bin"
    name = f"{folder}/{asset.sha256[:2]}/{asset.sha256}{ext}"
    if not default_storage.exists(name):
        default_storage.save(name, ContentFile(data))
    return name
