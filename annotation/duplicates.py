"""Near-duplicate keys for imported samples (issue 25, defect 11).

Pure computation, free of Django: a perceptual hash of an image's pixels
(``imagehash.phash``, stable under re-encoding) and a normalised form of a
question's text (Unicode NFKC, case folded, punctuation dropped, whitespace
collapsed), with a 64-bit key of it. Two samples whose text keys match and whose
image hashes are within ``MAX_IMAGE_DISTANCE`` bits are possible duplicates.

Both hashes are signed 64-bit integers, as a PostgreSQL ``bigint`` stores them.
numpy and Pillow are imported by the functions that use them, so that a process
that only imports this module (a web process serving pages) does not load them.
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
import string
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image

MAX_IMAGE_DISTANCE = 4
# imagehash.phash reduces an image to 32×32 grey pixels before its DCT.
_HASH_INPUT = 32
_HASH_BITS_SIDE = 8
_SMALL_PIXELS = 4096
_SPACE = re.compile(r"\s+")
_ASCII_MARKS = str.maketrans(dict.fromkeys(string.punctuation, " "))


def normalise_question(text: str) -> str:
    """The question as compared for duplicates: NFKC, casefold, no punctuation."""
    if text.isascii():
        # The same result at a fraction of the cost (the import keys every row): NFKC leaves
        # ASCII alone, casefold is lower, and the marks are string.punctuation.
        kept = text.lower().translate(_ASCII_MARKS)
    else:
        kept = _marks_to_spaces(unicodedata.normalize("NFKC", text).casefold())
    return _SPACE.sub(" ", kept).strip()


def _marks_to_spaces(text: str) -> str:
    """Punctuation and symbols (Unicode categories P and S) replaced by spaces."""
    return "".join(" " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in text)


def text_key(text: str) -> int | None:
    """A 64-bit key of the normalised text; None when nothing is left to compare."""
    normalised = normalise_question(text)
    if not normalised:
        return None
    digest = hashlib.blake2b(normalised.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@functools.cache
def _low_dct() -> Any:
    """The 64×1024 matrix giving the 8×8 lowest frequencies of scipy's (unnormalised) DCT-II
    of a 32×32 image, in both directions, from its pixels in row order."""
    import numpy as np

    k = np.arange(_HASH_BITS_SIDE)[:, None]
    n = np.arange(_HASH_INPUT)[None, :]
    side = 2 * np.cos(np.pi * k * (2 * n + 1) / (2 * _HASH_INPUT))
    return np.kron(side, side)


def phash_of(image: Image.Image) -> int:
    """The perceptual hash of an opened (or already decoded) image.

    The bits of ``imagehash.phash`` on the image reduced to 32×32 grey pixels (a test checks
    they are the same), computed with one product by a fixed matrix: imagehash's two scipy DCT
    calls cost about 0.2 ms an image, several seconds for an import of 41,883 rows. A large
    image is reduced first (box reduction, ``reducing_gap``) and only then made grey; a small
    one (a few thousand pixels) is made grey first, as that is the cheaper order there.
    """
    import numpy as np
    from PIL import Image

    if image.mode not in {"L", "RGB", "RGBA"}:
        image = image.convert("L")
    size = (_HASH_INPUT, _HASH_INPUT)
    if image.width * image.height <= _SMALL_PIXELS:
        grey = image.convert("L") if image.mode != "L" else image
        small = grey.resize(size, Image.Resampling.BILINEAR)
    else:
        small = image.resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0).convert("L")
    low = _low_dct() @ np.frombuffer(small.tobytes(), dtype=np.uint8)
    middle = np.partition(low, (31, 32))
    bits = np.packbits(low > (middle[31] + middle[32]) / 2)
    return int.from_bytes(bits.tobytes(), "big", signed=True)


def image_hash(data: bytes) -> int | None:
    """The perceptual hash of an image file, None if it is not an image."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            return phash_of(image)
    except (UnidentifiedImageError, OSError, ValueError):
        return None


def hash_distance(left: int, right: int) -> int:
    """Bits that differ between two perceptual hashes."""
    return ((left ^ right) & ((1 << 64) - 1)).bit_count()


@dataclass(frozen=True)
class Keyed:
    """One sample's duplicate keys: its text key and its first image's hash."""

    ident: int | str
    question: int | str | None
    image: int | None


def duplicate_pairs(
    items: Iterable[Keyed], max_distance: int = MAX_IMAGE_DISTANCE
) -> list[tuple[int | str, int | str, int | None]]:
    """Per later item, the first earlier one with the same text and a near-same image:
    (earlier, later, bits apart or None for two items without an image).

    Items group by text key, so the image comparison is quadratic only within one
    question's group; an item without text is never paired.
    """
    groups: dict[int | str, list[Keyed]] = {}
    pairs: list[tuple[int | str, int | str, int | None]] = []
    for item in items:
        if item.question is None or item.question == "":
            continue
        group = groups.setdefault(item.question, [])
        for earlier in group:
            matched, distance = _images_match(earlier.image, item.image, max_distance)
            if matched:
                pairs.append((earlier.ident, item.ident, distance))
                break
        group.append(item)
    return pairs


def _images_match(
    left: int | None, right: int | None, max_distance: int
) -> tuple[bool, int | None]:
    if left is None or right is None:
        return left is None and right is None, None
    distance = hash_distance(left, right)
    return distance <= max_distance, distance
