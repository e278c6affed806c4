"""Media assets: checked, stored once per content hash, derived (thumbnail, peaks) by a worker."""

from __future__ import annotations

import mimetypes

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
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


def media_asset_derive(*, asset_id: int) -> MediaAsset | None:
    """Make an image's thumbnail (and display copy, when it is larger than DISPLAY_SIZE) or an
    audio clip's waveform peaks; safe to run twice."""
    asset = MediaAsset.objects.filter(pk=asset_id).first()
    if asset is None or asset.derived_at is not None:
        return asset
    with default_storage.open(asset.file.name, "rb") as handle:
        data = handle.read()
    update: dict[str, object] = {"derived_at": timezone.now(), "derive_error": ""}
    try:
        if asset.kind == MediaKind.IMAGE:
            update["thumbnail"] = _store_derivative(asset, "thumbs", *make_thumbnail(data))
            if max(asset.width or 0, asset.height or 0) > DISPLAY_SIZE:
                display = make_thumbnail(data, size=DISPLAY_SIZE, quality=DISPLAY_QUALITY)
                update["display"] = _store_derivative(asset, "display", *display)
        else:
            update["peaks"] = waveform_peaks(data)
    except MediaError as exc:
        update["derive_error"] = str(exc)
    MediaAsset.objects.filter(pk=asset.pk).update(**update)
    asset.refresh_from_db()
    return asset


def _store_derivative(asset: MediaAsset, folder: str, data: bytes, mime: str) -> str:
    ext = mimetypes.guess_extension(mime) or ".bin"
    name = f"{folder}/{asset.sha256[:2]}/{asset.sha256}{ext}"
    if not default_storage.exists(name):
        default_storage.save(name, ContentFile(data))
    return name


def media_storage_name(*, kind: str, sha: str, mime: str) -> str:
    """Where the file of an asset with this content is stored (batch imports write it)."""
    return _storage_name(kind, sha, mime)
