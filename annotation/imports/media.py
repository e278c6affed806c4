"""Media files of an import: decoding them, storing them once, and sweeping up after failure."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage

from annotation.media_checks import inspect_audio, inspect_image
from annotation.models import MediaAsset, MediaRole


def max_bytes(role: str) -> int:
    if role == MediaRole.AUDIO:
        return int(settings.MEDIA_MAX_AUDIO_BYTES)
    return int(settings.MEDIA_MAX_IMAGE_BYTES)


def inspect(role: str, data: bytes) -> dict[str, Any]:
    if role == MediaRole.AUDIO:
        audio = inspect_audio(data, max_bytes=settings.MEDIA_MAX_AUDIO_BYTES)
        return {
            "mime_type": audio.mime,
            "duration_seconds": audio.duration_seconds,
            "sample_rate": audio.sample_rate,
            "channels": audio.channels,
        }
    image = inspect_image(
        data,
        max_bytes=settings.MEDIA_MAX_IMAGE_BYTES,
        max_pixels=settings.MEDIA_MAX_IMAGE_PIXELS,
    )
    return {"mime_type": image.mime, "width": image.width, "height": image.height}


def store_file(name: str, data: bytes) -> bool:
    """Store a media file under its content name; False when it was there already."""
    if isinstance(default_storage, FileSystemStorage):
        return _store_local(default_storage, name, data)
    if default_storage.exists(name):
        return False
    saved = default_storage.save(name, ContentFile(data))
    if saved != name:  # a concurrent writer won the name: keep one copy
        default_storage.delete(saved)
    return True


def _store_local(storage: FileSystemStorage, name: str, data: bytes) -> bool:
    """On local disk: create the file exclusively (the name is its content's hash, so a file
    already there holds the same bytes), a few system calls instead of the storage API's
    checks for a free name."""
    path = storage.path(name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = storage.file_permissions_mode or 0o644
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        return False
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if storage.file_permissions_mode is not None:
            os.chmod(path, storage.file_permissions_mode)  # the umask may have narrowed it
    except BaseException:
        os.unlink(path)
        raise
    return True


def sweep_files(written: list[tuple[str, str]]) -> None:
    """Delete files a failed chunk wrote, unless an asset row (another import's) owns them."""
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
