"""The helpers shared by the import formats (annotation/formats/records.py)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from annotation.formats.records import custom_cell, custom_value, decode_base64

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


@pytest.mark.parametrize(
    "value",
    [
        *("text", "3", "true", "null", "", " padded ", "nan", '"quoted"', "[1] apples"),
        *(3, 0.25, True, None, [1, "two"], {"a": {"b": [None]}}),
    ],
)
def test_a_custom_cell_reads_back_as_the_same_value_and_type(value: Any) -> None:
    """Text stays text even when it reads like a number or JSON; other values keep their type."""
    cell = custom_cell(value)
    assert cell != ""  # "" means the sample has no such field
    back = custom_value(cell)
    assert back == value and type(back) is type(value)


def test_plain_text_is_written_as_it_is() -> None:
    assert custom_cell("Look left.") == "Look left."
    assert custom_cell("3") == '"3"'
    assert custom_cell({"a": 1}) == '{"a": 1}'
