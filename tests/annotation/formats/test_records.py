"""The helpers shared by the import formats (annotation/formats/records.py)."""

from __future__ import annotations

import base64

import pytest

from annotation.formats.records import decode_base64

PNG = bytes(range(256)) * 3 + b"!"  # 769 bytes: the text ends with "=="
PLAIN = base64.b64encode(PNG).decode()


@pytest.mark.parametrize(
    "text",
    [
        PLAIN,
        f"data:image/png;base64,{PLAIN}",
        f"  {PLAIN}\n",
        "\n".join(PLAIN[i : i + 76] for i in range(0, len(PLAIN), 76)),
        PLAIN[:40] + "\u00a0" + PLAIN[40:],  # a no-break space pasted into the cell
        PLAIN.rstrip("="),
    ],
    ids=["plain", "data-uri", "padded-with-spaces", "wrapped", "nbsp", "no-padding"],
)
def test_base64_decodes_plain_and_every_tolerated_variant(text: str) -> None:
    """The fast path (plain base64) and the cleaning path give the same bytes."""
    assert decode_base64(text) == PNG


@pytest.mark.parametrize("text", ["", "   ", "not base64!", "data:image/png;base64,", "é" * 8])
def test_what_is_not_base64_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        decode_base64(text)
