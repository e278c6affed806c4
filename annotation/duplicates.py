"""Near-duplicate keys for imported samples (issue 25, defect 11).

Pure computation, free of Django: a perceptual hash of an image's pixels
(``imagehash.phash``, stable under re-encoding) and a normalised form of a
question's text (Unicode NFKC, case folded, punctuation dropped, whitespace
collapsed). Two samples whose keys match, or whose image hashes are within
``MAX_IMAGE_DISTANCE`` bits, are reported as possible duplicates.
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import imagehash
from PIL import Image, UnidentifiedImageError

MAX_IMAGE_DISTANCE = 4
_SPACE = re.compile(r"\s+")


def normalise_question(text: str) -> str:
    """The question as compared for duplicates: NFKC, casefold, no punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(" " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in folded)
    return _SPACE.sub(" ", kept).strip()


def image_hash(data: bytes) -> str | None:
    """The 64-bit perceptual hash of an image as 16 hex digits, None if not an image."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return str(imagehash.phash(image))
    except (UnidentifiedImageError, OSError, ValueError):
        return None


def hash_distance(left: str, right: str) -> int:
    """Bits that differ between two hashes made by ``image_hash``."""
    return (int(left, 16) ^ int(right, 16)).bit_count()


@dataclass(frozen=True)
class Keyed:
    """One sample's duplicate keys."""

    ident: str
    question: str
    image: str | None


def duplicate_pairs(
    items: Iterable[Keyed], max_distance: int = MAX_IMAGE_DISTANCE
) -> list[tuple[str, str]]:
    """Pairs (first seen, later) with the same question and a near-same image.

    Items group by normalised question, so the image comparison is quadratic
    only within one question's group.
    """
    groups: dict[str, list[Keyed]] = {}
    pairs: list[tuple[str, str]] = []
    for item in items:
        group = groups.setdefault(item.question, [])
        for earlier in group:
            if _images_match(earlier.image, item.image, max_distance):
                pairs.append((earlier.ident, item.ident))
                break
        group.append(item)
    return pairs


def _images_match(left: str | None, right: str | None, max_distance: int) -> bool:
    if left is None or right is None:
        return left is None and right is None
    return hash_distance(left, right) <= max_distance
