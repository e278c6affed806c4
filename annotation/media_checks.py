"""Inspection of uploaded images and audio: format, size and decodability checks,
thumbnails and waveform peaks. No Django: callers pass bytes and limits.

Pillow, soundfile and numpy are imported by the functions that use them, so that a process
that only imports this module (a web process serving pages) does not load them.
"""

from __future__ import annotations

import hashlib
import io
import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from annotation.duplicates import HashInput, hash_input
from annotation.formats.records import message

if TYPE_CHECKING:
    import soundfile as sf
    from PIL import Image

ALLOWED_IMAGE_FORMATS = {
    "JPEG": "image/jpeg",
    "PNG": "image/png",
    "GIF": "image/gif",
    "WEBP": "image/webp",
    "BMP": "image/bmp",
    "TIFF": "image/tiff",
}
AUDIO_MIME = {
    "WAV": "audio/wav",
    "WAVEX": "audio/wav",
    "OGG": "audio/ogg",
    "FLAC": "audio/flac",
    "MP3": "audio/mpeg",
    "MPEG": "audio/mpeg",
    "AIFF": "audio/aiff",
}
PEAK_BLOCK_FRAMES = 1 << 16


class MediaError(Exception):
    """An uploaded media file that must be refused; the message is shown to the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ImageInfo:
    """What a valid image is."""

    format: str
    mime: str
    width: int
    height: int
    # What the perceptual hash is made from (annotation.duplicates.hash_input), taken from
    # the decoded pixels; hashed later with other images (phashes_of).
    hash_input: HashInput | None = None


@dataclass(frozen=True)
class AudioInfo:
    """What a valid audio clip is."""

    format: str
    mime: str
    duration_seconds: float
    sample_rate: int
    channels: int


def sha256_hex(data: bytes) -> str:
    """The SHA-256 digest of the bytes, in hex (content address and duplicate check)."""
    return hashlib.sha256(data).hexdigest()


def _check_size(data: bytes, max_bytes: int, kind: str) -> None:
    # One whole sentence per kind, so that each language words it its own way.
    audio = kind == "audio"
    if not data:
        raise MediaError(
            message("the audio file is empty") if audio else message("the image file is empty")
        )
    if len(data) > max_bytes:
        values = {"size": len(data), "limit": max_bytes}
        raise MediaError(
            message(
                "the audio file is {size} bytes, more than the limit of {limit} bytes", **values
            )
            if audio
            else message(
                "the image file is {size} bytes, more than the limit of {limit} bytes", **values
            )
        )


def _open_image(data: bytes) -> Image.Image:
    """Open lazily, refusing decompression bombs instead of only warning about them."""
    from PIL import Image, UnidentifiedImageError

    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            return Image.open(io.BytesIO(data))
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise MediaError(
                message("the image declares too many pixels to open safely ({detail})", detail=exc)
            ) from exc
        except UnidentifiedImageError as exc:
            raise MediaError(message("the file is not an image in a recognised format")) from exc
        except (OSError, SyntaxError, ValueError) as exc:
            raise MediaError(message("the image header is damaged ({detail})", detail=exc)) from exc


def inspect_image(
    data: bytes, *, max_bytes: int, max_pixels: int, perceptual_hash: bool = True
) -> ImageInfo:
    """Check an image fully (header, size, pixel count, full decode) and describe it, with
    the input of its perceptual hash unless ``perceptual_hash`` is false."""
    _check_size(data, max_bytes, "image")
    image = _open_image(data)
    with image:
        image_format = image.format or ""
        if image_format not in ALLOWED_IMAGE_FORMATS:
            raise MediaError(
                message(
                    "the image format {format} is not accepted (accepted: {accepted})",
                    format=image_format or "unknown",
                    accepted=", ".join(ALLOWED_IMAGE_FORMATS),
                )
            )
        width, height = image.size
        # Checked on the header, before any pixel is decoded.
        if width * height > max_pixels:
            raise MediaError(
                message(
                    "the image is {width}×{height} pixels, more than the limit of {limit} pixels",
                    width=width,
                    height=height,
                    limit=max_pixels,
                )
            )
        if width <= 0 or height <= 0:
            raise MediaError(message("the image has no pixels"))
        # verify() does not decode pixel data; load() does, and fails on truncation.
        try:
            image.load()
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            raise MediaError(
                message(
                    "the image is truncated or damaged and cannot be decoded ({detail})", detail=exc
                )
            ) from exc
        # Taken from the pixels just decoded: no second decode. An image whose mode the
        # hash cannot reduce is kept, unhashed.
        reduced: HashInput | None = None
        if perceptual_hash:
            try:
                reduced = hash_input(image)
            except (OSError, ValueError):
                reduced = None
    return ImageInfo(image_format, ALLOWED_IMAGE_FORMATS[image_format], width, height, reduced)


def make_thumbnail(data: bytes, *, size: int = 320, quality: int = 80) -> tuple[bytes, str]:
    """A preview at most `size` pixels on its longer side, as WEBP (JPEG without WEBP).

    Call it on an image that passed `inspect_image`. The workbench's display image is one
    too, larger and of a higher quality so that small text stays legible.
    """
    from PIL import Image, ImageOps, features

    image = _open_image(data)
    with image:
        if image.format == "JPEG":
            image.draft("RGB", (size, size))  # decode at a reduced scale: much faster
        oriented = _to_eight_bit(ImageOps.exif_transpose(image))
        has_alpha = oriented.mode in {"RGBA", "LA", "PA"} or (
            oriented.mode == "P" and "transparency" in oriented.info
        )
        converted = oriented.convert("RGBA" if has_alpha else "RGB")
        converted.thumbnail((size, size), Image.Resampling.LANCZOS)
    output = io.BytesIO()
    if features.check("webp"):
        converted.save(output, format="WEBP", quality=quality, method=4)
        return output.getvalue(), "image/webp"
    if converted.mode == "RGBA":
        background = Image.new("RGB", converted.size, "white")
        background.paste(converted, mask=converted.getchannel("A"))
        converted = background
    converted.save(output, format="JPEG", quality=min(quality + 2, 95), optimize=True)
    return output.getvalue(), "image/jpeg"


def _to_eight_bit(image: Image.Image) -> Image.Image:
    """Scale 16-bit and float images to 8-bit grey (a plain convert clips them to white)."""
    if image.mode not in {"I", "F"} and not image.mode.startswith("I;16"):
        return image
    import numpy as np
    from PIL import Image

    values = np.asarray(image, dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    scaled = (values - low) * (255.0 / (high - low)) if high > low else np.zeros_like(values)
    return Image.fromarray(scaled.astype(np.uint8), mode="L")


def _open_audio(data: bytes) -> sf.SoundFile:
    import soundfile as sf

    try:
        return sf.SoundFile(io.BytesIO(data))
    except (sf.LibsndfileError, RuntimeError, TypeError, ValueError) as exc:
        raise MediaError(
            message("the file is not audio in a recognised format (WAV, Ogg, FLAC, MP3, AIFF)")
        ) from exc


def inspect_audio(data: bytes, *, max_bytes: int) -> AudioInfo:
    """Check that bytes are a decodable audio clip with samples, and describe it."""
    import soundfile as sf

    _check_size(data, max_bytes, "audio")
    with _open_audio(data) as sound:
        frames, rate, channels = sound.frames, sound.samplerate, sound.channels
        if frames <= 0 or rate <= 0:
            raise MediaError(message("the audio file contains no sound"))
        try:
            # A header can be valid over a broken body: decode the first block too.
            sound.read(min(frames, 4096), dtype="float32")
        except (sf.LibsndfileError, RuntimeError) as exc:
            raise MediaError(message("the audio cannot be decoded ({detail})", detail=exc)) from exc
        audio_format = sound.format
    return AudioInfo(
        format=audio_format,
        mime=AUDIO_MIME.get(audio_format, "application/octet-stream"),
        duration_seconds=frames / rate,
        sample_rate=rate,
        channels=channels,
    )


def waveform_peaks(data: bytes, *, buckets: int = 1000) -> list[float]:
    """Per bucket, the largest absolute amplitude of the mono mix, in [0, 1].

    Decodes block by block so a long clip never sits in memory as samples. Returns
    fewer values than `buckets` when the clip has fewer frames.
    """
    if buckets <= 0:
        raise ValueError("buckets must be positive")
    import numpy as np

    with _open_audio(data) as sound:
        frames = sound.frames
        if frames <= 0:
            return []
        count = min(buckets, frames)
        per_bucket = math.ceil(frames / count)
        # Whole buckets per block, so each bucket's maximum is computed in one block.
        block = per_bucket * max(1, PEAK_BLOCK_FRAMES // per_bucket)
        peaks: list[float] = []
        for chunk in sound.blocks(blocksize=block, dtype="float32", always_2d=True):
            mono = np.abs(chunk.mean(axis=1))
            whole = (len(mono) // per_bucket) * per_bucket
            if whole:
                peaks.extend(mono[:whole].reshape(-1, per_bucket).max(axis=1).tolist())
            if whole < len(mono):
                peaks.append(float(mono[whole:].max()))
    return [round(min(1.0, max(0.0, peak)), 4) for peak in peaks]
