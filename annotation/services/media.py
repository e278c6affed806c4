"""Media assets: checked, stored once per content hash, derived (thumbnail, peaks) by a worker."""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation.media_checks import (
    MediaError,
    inspect_audio,
    inspect_image,
    make_thumbnail,
    sha256_hex,
    waveform_peaks,
)
from annotation.models import MediaAsset, MediaKind
from core.tasks import enqueue

# The workbench shows an image from a display copy at most this many pixels on its longer side
# (larger than the viewer, which is at most about 1000 CSS pixels, on a screen of two device
# pixels per CSS pixel); an image no larger is shown as it is. "Full resolution" loads the original.
DISPLAY_SIZE = 2048
DISPLAY_QUALITY = 90


def _storage_name(kind: str, sha: str, mime: str) -> str:
    ext = mimetypes.guess_extension(mime) or ".bin"
    return f"media/{kind}/{sha[:2]}/{sha}{ext}"


def media_asset_store(
    *, data: bytes, kind: str, source_url: str = "", licence: str = ""
) -> MediaAsset:
    """Check a media file and store it once per content; the same bytes give the same asset.

    Raises ValidationError with a readable message when the bytes are not acceptable media.
    Derivation (thumbnail, waveform peaks) is queued for a worker once the row is committed.
    """
    sha = sha256_hex(data)
    existing = MediaAsset.objects.filter(sha256=sha).first()
    if existing is not None:
        return existing
    try:
        if kind == MediaKind.IMAGE:
            image = inspect_image(
                data,
                max_bytes=settings.MEDIA_MAX_IMAGE_BYTES,
                max_pixels=settings.MEDIA_MAX_IMAGE_PIXELS,
            )
            fields: dict[str, object] = {
                "mime_type": image.mime,
                "width": image.width,
                "height": image.height,
            }
        elif kind == MediaKind.AUDIO:
            audio = inspect_audio(data, max_bytes=settings.MEDIA_MAX_AUDIO_BYTES)
            fields = {
                "mime_type": audio.mime,
                "duration_seconds": audio.duration_seconds,
                "sample_rate": audio.sample_rate,
                "channels": audio.channels,
            }
        else:
            raise ValidationError(f"Unknown media kind {kind!r}.", code="bad_kind")
    except MediaError as exc:
        raise ValidationError(str(exc), code="bad_media") from exc

    name = _storage_name(kind, sha, str(fields["mime_type"]))
    if not default_storage.exists(name):
        saved = default_storage.save(name, ContentFile(data))
        if saved != name:  # a concurrent writer won the name: keep one copy
            default_storage.delete(saved)
    try:
        with transaction.atomic():
            asset = MediaAsset.objects.create(
                sha256=sha,
                kind=kind,
                file=name,
                size_bytes=len(data),
                source_url=source_url,
                licence=licence,
                **fields,
            )
    except IntegrityError:
        return MediaAsset.objects.get(sha256=sha)
    _queue_derive(asset.pk)
    return asset


def _queue_derive(asset_id: int) -> None:
    transaction.on_commit(lambda: enqueue("annotation.derive_media_asset", asset_id))


# Images a browser shows as they are: one that already fits the thumbnail box is its own
# thumbnail (re-encoding a 24×24 PNG costs more than it saves, and a file more to store).
OWN_THUMBNAIL_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")
THUMBNAIL_SIZE = 320


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
            return {"peaks": waveform_peaks(data)}
        update: dict[str, object] = {
            "thumbnail": _store_derivative(
                asset, "thumbs", *make_thumbnail(data, size=THUMBNAIL_SIZE)
            )
        }
        if max(asset.width or 0, asset.height or 0) > DISPLAY_SIZE:
            display = make_thumbnail(data, size=DISPLAY_SIZE, quality=DISPLAY_QUALITY)
            update["display"] = _store_derivative(asset, "display", *display)
    except MediaError as exc:
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


def media_storage_name(*, kind: str, sha: str, mime: str) -> str:
    """Where the file of an asset with this content is stored (batch imports write it)."""
    return _storage_name(kind, sha, mime)
