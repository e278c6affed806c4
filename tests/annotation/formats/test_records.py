"""The helpers shared by the import formats (annotation/formats/records.py)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.formats.records import (
    TooDeepError,
    as_text_list,
    custom_cell,
    custom_value,
    decode_base64,
    hostile_problem,
    loads_json,
)
from core.limits import MAX_JSON_DEPTH

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


# -- hostile rows (records.hostile_problem, core.limits) ---------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=30,
)


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _holds_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_nul(v) for v in value)
    return False


def _wrapped(value: object, depth: int) -> object:
    for _ in range(depth):
        value = [value]
    return value


@given(value=json_values, extra_depth=st.integers(min_value=0, max_value=120))
def test_any_value_passes_or_is_rejected_with_a_reason_and_never_raises(
    value: object, extra_depth: int
) -> None:
    """Whatever the nesting and the texts, the check answers (a reason or None) without
    raising, and refuses exactly the values holding NUL or nested past 100 levels."""
    wrapped = _wrapped(value, extra_depth)
    problem = hostile_problem(wrapped)
    expected = _holds_nul(value) or _depth(wrapped) > MAX_JSON_DEPTH
    assert (problem is not None) == expected, (problem, _depth(wrapped))
    if problem is not None:
        assert ("NUL character" in problem) or ("nested more than 100" in problem)
        assert "\x00" not in problem


@pytest.mark.parametrize("depth", [101, 1_000, 100_000])
def test_values_of_any_depth_are_checked_without_recursion(depth: int) -> None:
    problem = hostile_problem({"meta": _wrapped(1, depth)})
    assert problem is not None and "the field 'meta' is nested more than 100" in problem
    assert hostile_problem(_wrapped("ok", MAX_JSON_DEPTH)) is None


def test_a_nul_is_named_by_its_field_and_shown_escaped() -> None:
    assert "'question'" in (hostile_problem({"question": "a\x00b"}) or "")
    assert "'k\\u0000'" in (hostile_problem({"k\x00": 1}) or "")
    assert hostile_problem({"image": b"\x00\x01"}) is None  # bytes are media, not text


@pytest.mark.parametrize("depth", [150, 1_000, 100_000])
def test_json_cells_obey_the_same_depth_limit(depth: int) -> None:
    with pytest.raises(TooDeepError, match="nested more than 100"):
        loads_json("[" * depth + "]" * depth)
    assert loads_json("[[1]]") == [[1]]
    problems: list[str] = []
    assert as_text_list("[" * depth + "]" * depth, problems) == []
    assert problems and "nested more than 100" in problems[0]


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
