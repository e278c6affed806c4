"""Tests for image and audio inspection, thumbnails and waveform peaks."""

import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PIL import Image

from annotation.media_checks import (
    MediaError,
    inspect_audio,
    inspect_image,
    make_thumbnail,
    sha256_hex,
    waveform_peaks,
)

# CI keeps ../shared beside the clone.
AUDIO = Path(__file__).resolve().parents[3] / "shared" / "data" / "audio"
MB = 1024 * 1024


def image_bytes(mode: str = "RGB", size: tuple[int, int] = (64, 48), fmt: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    image = Image.effect_noise(size, 80).convert(mode)
    image.save(buffer, format=fmt)
    return buffer.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A tiny valid PNG whose IHDR is patched to claim another size (with a correct CRC)."""
    data = bytearray(image_bytes(size=(2, 2)))
    # Signature (8) + length (4) + b"IHDR" (4): width and height follow.
    assert data[12:16] == b"IHDR"
    data[16:24] = struct.pack(">II", width, height)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    return bytes(data)


def wav_bytes(samples: np.ndarray, rate: int = 8000) -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, samples, rate, format="WAV", subtype="FLOAT")
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP", "BMP", "TIFF"])
def test_accepted_formats_are_described(fmt: str) -> None:
    """Each accepted format is identified with its MIME type and size."""
    info = inspect_image(image_bytes(fmt=fmt), max_bytes=MB, max_pixels=10_000)
    assert (info.format, info.width, info.height) == (fmt, 64, 48)
    assert info.mime.startswith("image/")


def test_truncated_png_fails_with_a_readable_message() -> None:
    """A PNG cut in half opens lazily but fails to decode, with a readable message."""
    data = image_bytes(size=(200, 200))
    with pytest.raises(MediaError, match="truncated or damaged"):
        inspect_image(data[: len(data) // 2], max_bytes=MB, max_pixels=10**6)


def test_header_claiming_huge_size_is_refused_before_decoding() -> None:
    """A PNG claiming 30000×30000 pixels is refused from its header."""
    with pytest.raises(MediaError, match="pixels"):
        inspect_image(png_claiming(30000, 30000), max_bytes=MB, max_pixels=10**12)


def test_decompression_bomb_warning_becomes_an_error() -> None:
    """Between Pillow's warning and error thresholds the image is still refused."""
    with pytest.raises(MediaError, match="too many pixels"):
        inspect_image(png_claiming(10000, 10000), max_bytes=MB, max_pixels=10**12)


def test_own_pixel_limit_is_checked() -> None:
    """The caller's pixel limit applies before decoding."""
    with pytest.raises(MediaError) as error:
        inspect_image(png_claiming(3000, 2000), max_bytes=MB, max_pixels=5_000_000)
    assert error.value.message == (
        "the image is 3000×2000 pixels, more than the limit of 5000000 pixels"
    )


def test_empty_oversized_and_non_images_are_refused() -> None:
    """Empty files, files over the byte limit and non-images are refused."""
    with pytest.raises(MediaError, match="empty"):
        inspect_image(b"", max_bytes=MB, max_pixels=10**6)
    with pytest.raises(MediaError, match="more than the limit of 10 bytes"):
        inspect_image(image_bytes(), max_bytes=10, max_pixels=10**6)
    with pytest.raises(MediaError, match="not an image"):
        inspect_image(b"hello, world", max_bytes=MB, max_pixels=10**6)


def test_unaccepted_format_is_refused() -> None:
    """An image in a format outside the allowed list (here ICO) is refused."""
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16)).save(buffer, format="ICO")
    with pytest.raises(MediaError, match="format ICO is not accepted"):
        inspect_image(buffer.getvalue(), max_bytes=MB, max_pixels=10**6)


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "P", "CMYK", "L", "LA"])
def test_thumbnail_handles_modes(mode: str) -> None:
    """Palette, alpha, CMYK and grey images all make a bounded thumbnail."""
    fmt = "TIFF" if mode == "CMYK" else "PNG"
    data = image_bytes(mode=mode, size=(800, 400), fmt=fmt)
    thumb, mime = make_thumbnail(data, size=320)
    assert mime == "image/webp"
    with Image.open(io.BytesIO(thumb)) as image:
        assert image.size == (320, 160)


def test_sixteen_bit_thumbnail_keeps_its_contrast() -> None:
    """A 16-bit grey PNG is scaled to 8 bits rather than clipped to white."""
    ramp = (np.arange(20000).reshape(100, 200) * 3).astype("uint16")
    buffer = io.BytesIO()
    Image.fromarray(ramp).save(buffer, format="PNG")
    thumb, _ = make_thumbnail(buffer.getvalue(), size=100)
    with Image.open(io.BytesIO(thumb)) as image:
        low, high = image.convert("L").getextrema()
    assert isinstance(low, int) and isinstance(high, int)
    assert low < 20
    assert high > 235


def test_thumbnail_applies_exif_orientation() -> None:
    """A JPEG tagged as rotated 90° is thumbnailed upright."""
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90° clockwise to display
    buffer = io.BytesIO()
    Image.new("RGB", (400, 200), "blue").save(buffer, format="JPEG", exif=exif)
    thumb, _ = make_thumbnail(buffer.getvalue(), size=100)
    with Image.open(io.BytesIO(thumb)) as image:
        assert image.size == (50, 100)


def test_sha256_hex() -> None:
    """The digest is the hex SHA-256."""
    assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


@pytest.mark.shared_data
def test_real_ogg_clips_are_inspected_and_peaked() -> None:
    """Every real Ogg Vorbis clip is recognised and gives peaks within [0, 1]."""
    clips = sorted(AUDIO.glob("*.ogg"))
    assert len(clips) == 8
    for clip in clips:
        data = clip.read_bytes()
        info = inspect_audio(data, max_bytes=50 * MB)
        assert info.format == "OGG"
        assert info.mime == "audio/ogg"
        assert info.duration_seconds > 1
        assert info.sample_rate > 0
        assert info.channels in {1, 2}
        peaks = waveform_peaks(data, buckets=200)
        assert len(peaks) == 200
        assert all(0.0 <= peak <= 1.0 for peak in peaks)
        assert max(peaks) > 0.05


def test_text_file_named_wav_empty_and_zero_length_audio_are_refused(tmp_path: Path) -> None:
    """A text file named .wav, an empty file and a WAV without samples are refused."""
    fake = tmp_path / "clip.wav"
    fake.write_text("this is not audio\n" * 20)
    with pytest.raises(MediaError, match="not audio"):
        inspect_audio(fake.read_bytes(), max_bytes=MB)
    with pytest.raises(MediaError, match="empty"):
        inspect_audio(b"", max_bytes=MB)
    with pytest.raises(MediaError, match="no sound"):
        inspect_audio(wav_bytes(np.zeros(0, dtype="float32")), max_bytes=MB)
    with pytest.raises(MediaError, match="limit"):
        inspect_audio(wav_bytes(np.zeros(8000, dtype="float32")), max_bytes=100)


def test_wav_is_described() -> None:
    """A generated stereo WAV reports its duration, rate and channels."""
    info = inspect_audio(wav_bytes(np.zeros((16000, 2), dtype="float32")), max_bytes=MB)
    assert (info.format, info.mime, info.sample_rate, info.channels) == (
        "WAV",
        "audio/wav",
        8000,
        2,
    )
    assert info.duration_seconds == pytest.approx(2.0)


def test_waveform_peaks_follow_the_mono_mix() -> None:
    """Peaks are the per-bucket maximum of |mean of channels|, computed across blocks."""
    frames = 200_000  # several read blocks
    left = np.zeros(frames, dtype="float32")
    left[: frames // 2] = 0.8
    right = np.zeros(frames, dtype="float32")
    right[: frames // 2] = 0.4
    right[-1] = -1.0
    peaks = waveform_peaks(wav_bytes(np.stack([left, right], axis=1)), buckets=100)
    assert len(peaks) == 100
    assert peaks[:50] == pytest.approx([0.6] * 50)
    assert peaks[50:99] == [0.0] * 49
    assert peaks[99] == pytest.approx(0.5)


def test_waveform_of_a_short_clip_has_one_peak_per_frame() -> None:
    """A clip shorter than the bucket count gives one value per frame."""
    peaks = waveform_peaks(wav_bytes(np.array([0.5, -0.25, 0.0], dtype="float32")), buckets=10)
    assert peaks == [0.5, 0.25, 0.0]
