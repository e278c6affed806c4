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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image

MAX_IMAGE_DISTANCE = 4
# imagehash.phash reduces an image to 32×32 grey pixels before its DCT.
_HASH_INPUT = 32
_HASH_BITS_SIDE = 8
_SMALL_PIXELS = 4096
# The modes a small image is kept in until it is hashed with others.
_STACKED_MODES = frozenset({"L", "RGB", "RGBA"})
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
def _dct_rows() -> Any:
    """The 8×32 matrix giving the 8 lowest frequencies of scipy's (unnormalised) DCT-II of 32
    values; the 8×8 lowest of a 32×32 image are ``D @ pixels @ D.T``."""
    import numpy as np

    k = np.arange(_HASH_BITS_SIDE)[:, None]
    n = np.arange(_HASH_INPUT)[None, :]
    return 2 * np.cos(np.pi * k * (2 * n + 1) / (2 * _HASH_INPUT))


@dataclass(frozen=True)
class HashInput:
    """An image's pixels as its perceptual hash starts from: a small image's own (``L``,
    ``RGB`` or ``RGBA``, at most ``_SMALL_PIXELS``), or a large one's reduced to 32×32 grey."""

    mode: str
    width: int
    height: int
    pixels: bytes


def hash_input(image: Image.Image) -> HashInput:
    """What an opened (or already decoded) image's perceptual hash is made from.

    As ``imagehash.phash``, the hash is that of the image reduced to 32×32 grey pixels
    (bilinear; a test checks the bits are imagehash's). A large image is reduced here (box
    reduction first, ``reducing_gap``) and only then made grey; a small one (a few thousand
    pixels) is kept as it is, to be made grey and reduced with others (``phashes_of``), which
    gives the same pixels as doing it here, at a fraction of the cost.
    """
    from PIL import Image

    if image.mode not in _STACKED_MODES:
        image = image.convert("L")
    if image.width * image.height <= _SMALL_PIXELS:
        return HashInput(image.mode, image.width, image.height, image.tobytes())
    size = (_HASH_INPUT, _HASH_INPUT)
    small = image.resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0).convert("L")
    return HashInput("L", _HASH_INPUT, _HASH_INPUT, small.tobytes())


def reduced_pixels(inputs: Sequence[HashInput]) -> Any:
    """The 32×32 grey pixels of each image, as a (n, 32, 32) uint8 array: the pixels of
    ``image.convert("L").resize((32, 32), BILINEAR)`` for a small one (a test checks it).

    Images of one mode and size are made grey and resized together, by Pillow itself: one
    above the other for the grey conversion and the horizontal pass (each row alone), side
    by side for the vertical pass (each column alone), in the order of its two separable
    passes that Pillow takes for that size (``_pass_order``), so that no pixel of one image is
    read for another. Four Pillow calls per size instead of three per image.
    """
    import numpy as np
    from PIL import Image

    side = _HASH_INPUT
    reduced = np.empty((len(inputs), side, side), dtype=np.uint8)
    groups: dict[tuple[str, int, int], list[int]] = {}
    for index, item in enumerate(inputs):
        groups.setdefault((item.mode, item.width, item.height), []).append(index)
    for (mode, width, height), indexes in groups.items():
        count = len(indexes)
        pixels = b"".join(inputs[i].pixels for i in indexes)
        stacked = Image.frombytes(mode, (width, count * height), pixels)
        grey = stacked.convert("L") if mode != "L" else stacked
        tall = np.frombuffer(grey.tobytes(), dtype=np.uint8).reshape(count, height, width)
        order = _pass_order(width, height)
        if order is None:  # no stacking gives Pillow's pixels: one image at a time
            for at, one in zip(indexes, tall, strict=True):
                small = Image.frombytes("L", (width, height), one.tobytes()).resize(
                    (side, side), Image.Resampling.BILINEAR
                )
                reduced[at] = np.frombuffer(small.tobytes(), dtype=np.uint8).reshape(side, side)
        else:
            reduced[indexes] = _two_passes(tall, order)
    return reduced


def _horizontal_pass(images: Any) -> Any:
    """(k, h, w) grey images resized to (k, h, 32), one above the other (rows are resized
    alone)."""
    import numpy as np
    from PIL import Image

    count, height, width = images.shape
    tall = Image.frombytes("L", (width, count * height), images.tobytes())
    done = tall.resize((_HASH_INPUT, count * height), Image.Resampling.BILINEAR)
    return np.frombuffer(done.tobytes(), dtype=np.uint8).reshape(count, height, _HASH_INPUT)


def _vertical_pass(images: Any) -> Any:
    """(k, h, w) grey images resized to (k, 32, w), side by side (columns are resized alone)."""
    import numpy as np
    from PIL import Image

    count, height, width = images.shape
    wide = Image.frombytes("L", (count * width, height), images.transpose(1, 0, 2).tobytes())
    done = wide.resize((count * width, _HASH_INPUT), Image.Resampling.BILINEAR)
    across = np.frombuffer(done.tobytes(), dtype=np.uint8).reshape(_HASH_INPUT, count, width)
    return across.transpose(1, 0, 2)


def _two_passes(images: Any, order: str) -> Any:
    if order == "horizontal first":
        return _vertical_pass(_horizontal_pass(images))
    return _horizontal_pass(_vertical_pass(images))


@functools.lru_cache(maxsize=4096)
def _pass_order(width: int, height: int) -> str | None:
    """Which of its two passes Pillow makes first when it resizes a grey image of this size
    to 32×32 (it chooses by size; the passes round to 8 bits in between, so the order shows
    in the pixels): found by resizing a random probe both ways. None if neither gives
    Pillow's pixels (a Pillow that resizes otherwise)."""
    import numpy as np
    from PIL import Image

    generator = np.random.default_rng(width * 65_537 + height)
    probe = generator.integers(0, 256, (1, height, width), dtype=np.uint8)
    single = Image.frombytes("L", (width, height), probe.tobytes()).resize(
        (_HASH_INPUT, _HASH_INPUT), Image.Resampling.BILINEAR
    )
    expected = np.frombuffer(single.tobytes(), dtype=np.uint8).reshape(1, _HASH_INPUT, -1)
    for order in ("horizontal first", "vertical first"):
        if np.array_equal(_two_passes(probe, order), expected):
            return order
    return None


def phashes_of(inputs: Sequence[HashInput]) -> list[int]:
    """The perceptual hashes of many images at once, from their ``hash_input``: the bits of
    ``imagehash.phash`` (the DCT's 8×8 lowest frequencies above their median), the DCT made
    as ``D @ pixels @ D.T`` by one stacked product per side.

    imagehash's two scipy DCT calls cost about 0.2 ms an image, one product by the 64×1024
    matrix of both sides about 10 µs (and reading that 512 KB matrix for each image evicts
    the reader's caches); the stacked products cost under 1 µs an image.
    """
    if not inputs:
        return []
    import numpy as np

    rows = _dct_rows()
    pixels = reduced_pixels(inputs).astype(np.float64)
    low = (rows @ (pixels @ rows.T)).reshape(len(inputs), _HASH_BITS_SIDE**2)
    middle = np.partition(low, (31, 32), axis=1)
    medians = (middle[:, 31] + middle[:, 32]) / 2
    bits = np.packbits(low > medians[:, None], axis=1)
    hashes: list[int] = bits.view(">i8").ravel().tolist()
    return hashes


def phash_of(image: Image.Image) -> int:
    """The perceptual hash of an opened (or already decoded) image (``phashes_of`` of one)."""
    return phashes_of([hash_input(image)])[0]


def image_hash_input(data: bytes) -> HashInput | None:
    """The ``hash_input`` of an image file, None if it is not an image."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            return hash_input(image)
    except (UnidentifiedImageError, OSError, ValueError):
        return None


def image_hash(data: bytes) -> int | None:
    """The perceptual hash of an image file, None if it is not an image."""
    reduced = image_hash_input(data)
    return None if reduced is None else phashes_of([reduced])[0]


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
