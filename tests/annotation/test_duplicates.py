"""Near-duplicate keys (issue 25, defect 11), on real images from shared/data."""

from __future__ import annotations

import io
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from annotation.duplicates import (
    Keyed,
    _marks_to_spaces,
    duplicate_pairs,
    hash_distance,
    image_hash,
    normalise_question,
    phash_of,
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
