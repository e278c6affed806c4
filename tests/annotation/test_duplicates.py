"""Near-duplicate keys (issue 25, defect 11), on real images from shared/data."""

from __future__ import annotations

import io
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from annotation.duplicates import (
    Keyed,
    _marks_to_spaces,
    duplicate_pairs,
    hash_distance,
    hash_input,
    image_hash,
    normalise_question,
    phash_of,
    phashes_of,
    reduced_pixels,
    text_key,
)

IMAGES = Path(__file__).resolve().parents[3] / "shared" / "data" / "logicvista" / "images"


def _real_images() -> list[Path]:
    found = sorted(IMAGES.glob("*.png"))[:3]
    if len(found) < 2:
        pytest.skip("shared/data images not present")
    return found


def _reencode(data: bytes, quality: int) -> bytes:
    out = io.BytesIO()
    with Image.open(io.BytesIO(data)) as image:
        image.convert("RGB").save(out, format="JPEG", quality=quality)
    return out.getvalue()


def test_defect_11_reencoded_jpeg_keeps_its_hash() -> None:
    original = _real_images()[0].read_bytes()
    high, low = _reencode(original, 95), _reencode(original, 40)
    assert high != low
    first, second = image_hash(high), image_hash(low)
    assert first is not None and second is not None
    assert hash_distance(first, second) <= 4


def test_different_images_hash_apart() -> None:
    left, right = (image_hash(p.read_bytes()) for p in _real_images()[:2])
    assert left is not None and right is not None
    assert hash_distance(left, right) > 4


def test_not_an_image_has_no_hash() -> None:
    assert image_hash(b"not an image") is None


def test_defect_11_case_changed_copy_normalises_alike() -> None:
    assert normalise_question("What  is SHOWN?") == normalise_question("what is shown")
    assert normalise_question("ＡＢＣ，１２３") == normalise_question("abc 123")


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_the_ascii_shortcut_normalises_as_unicode_does(text: str) -> None:
    slow = re.sub(r"\s+", " ", _marks_to_spaces(unicodedata.normalize("NFKC", text).casefold()))
    assert normalise_question(text) == slow.strip()


@given(st.text())
def test_normalise_is_idempotent(text: str) -> None:
    once = normalise_question(text)
    assert normalise_question(once) == once


def test_defect_11_pairs_same_image_and_question_under_new_id() -> None:
    paths = _real_images()
    raw = paths[0].read_bytes()
    a = Keyed("a", text_key("Which shape?"), image_hash(raw))
    b = Keyed("b", text_key("which SHAPE"), image_hash(_reencode(raw, 50)))
    c = Keyed("c", text_key("Which shape?"), image_hash(paths[1].read_bytes()))
    d = Keyed("d", text_key("Other question"), image_hash(raw))
    e = Keyed("e", text_key("Which shape"), image_hash(raw))
    [(first, later, distance), (again, third, same)] = duplicate_pairs([a, b, c, d, e])
    assert (first, later, again, third, same) == ("a", "b", "a", "e", 0)
    assert distance is not None and distance <= 4


def test_items_without_text_are_never_paired_and_two_without_images_are() -> None:
    items = [Keyed(1, None, None), Keyed(2, None, None), Keyed(3, 7, None), Keyed(4, 7, None)]
    assert duplicate_pairs(items) == [(3, 4, None)]
    assert duplicate_pairs([Keyed(1, 7, None), Keyed(2, 7, 5)]) == []


def test_no_text_has_no_key() -> None:
    assert text_key(" ?! ") is None
    assert text_key("Is it red?") == text_key("is  it RED") != text_key("is it blue")


@pytest.mark.parametrize("count", [8])
def test_the_hash_has_the_bits_of_imagehash_on_the_reduced_image(count: int) -> None:
    """phash_of gives imagehash.phash's bits, computed without scipy."""
    import imagehash

    for path in sorted(IMAGES.glob("*.png"))[:count] or pytest.skip("no shared images"):
        with Image.open(path) as image:
            image.load()
            ours = phash_of(image)
            reduced = image.resize((32, 32), Image.Resampling.BILINEAR, reducing_gap=2.0)
        theirs = int(str(imagehash.phash(reduced.convert("L"))), 16)
        assert ours & (2**64 - 1) == theirs


@pytest.mark.parametrize("mode", ["P", "RGBA", "LA", "CMYK", "I;16", "1"])
def test_every_mode_hashes(mode: str) -> None:
    with Image.open(_real_images()[0]) as image:
        converted = image.convert("RGB").convert(mode) if mode != "I;16" else image.convert("I;16")
    assert isinstance(phash_of(converted), int)


def test_a_small_image_hashes_like_its_grey_copy() -> None:
    with Image.open(_real_images()[0]) as image:
        small = image.convert("RGB").resize((24, 20))
    assert phash_of(small) == phash_of(small.convert("L"))


def _random_image(mode: str, width: int, height: int, seed: int) -> Image.Image:
    pixels = np.random.default_rng(seed).bytes(width * height * 3)
    rgb = Image.frombytes("RGB", (width, height), pixels)
    return rgb.convert("L").convert("I;16") if mode == "I;16" else rgb.convert(mode)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["L", "RGB", "RGBA", "P", "LA", "1", "CMYK", "I;16"]),
            st.integers(1, 70),
            st.integers(1, 70),
            st.integers(0, 2**32 - 1),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_images_reduced_together_have_each_image_s_own_pixels(
    specs: list[tuple[str, int, int, int]],
) -> None:
    """Stacked by mode and size, every small image gets the pixels Pillow gives it alone
    (grey, then bilinear to 32×32), whatever its size, mode and the images beside it; a
    large one (over 4,096 pixels) is reduced alone, box reduction first."""
    images = [_random_image(*spec) for spec in specs]
    # The same size twice or more, so that images are stacked.
    images += [_random_image(mode, width, height, seed + 1) for mode, width, height, seed in specs]
    reduced = reduced_pixels([hash_input(image) for image in images])
    for image, got in zip(images, reduced, strict=True):
        own = image.convert("L") if image.mode not in {"L", "RGB", "RGBA"} else image
        if own.width * own.height <= 4096:
            alone = (own.convert("L") if own.mode != "L" else own).resize(
                (32, 32), Image.Resampling.BILINEAR
            )
        else:
            alone = own.resize((32, 32), Image.Resampling.BILINEAR, reducing_gap=2.0).convert("L")
        assert got.tobytes() == alone.tobytes()


def test_a_chunk_of_images_hashes_as_each_alone_and_as_imagehash() -> None:
    """The import's 24×24 colour images and real ones, hashed as one stack: each has its
    hash alone and imagehash.phash's bits on its reduced pixels."""
    import imagehash

    images = [_random_image("RGB", 24, 24, seed) for seed in range(40)]
    images += [Image.open(path) for path in sorted(IMAGES.glob("*.png"))[:4]]
    together = phashes_of([hash_input(image) for image in images])
    assert together == [phash_of(image) for image in images]
    for image, ours in zip(images, together, strict=True):
        own = image.convert("L") if image.mode not in {"L", "RGB", "RGBA"} else image
        if own.width * own.height > 4096:
            reduced = own.resize((32, 32), Image.Resampling.BILINEAR, reducing_gap=2.0)
            small = reduced.convert("L")
        else:
            small = own.convert("L").resize((32, 32), Image.Resampling.BILINEAR)
        assert ours & (2**64 - 1) == int(str(imagehash.phash(small)), 16)
    assert phashes_of([]) == []
