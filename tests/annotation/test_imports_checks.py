"""The checks of a parsed row the database would refuse (annotation.imports.checks)."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.formats.records import ParsedSample
from annotation.imports.checks import shape_problems


def parsed(**fields: Any) -> ParsedSample:
    values: dict[str, Any] = {"external_id": "q1", "safety_label": "safe"}
    return ParsedSample(row=1, **(values | {"pipeline": "mllm_generated"} | fields))


@pytest.mark.parametrize(
    "fields",
    [
        {"question": "What\x00 is this?"},
        {"external_id": "q\x00"},
        {"options": [{"label": "A", "text": "a\x00"}]},
        {"generator_models": ["m\x00"]},
        {"extra": {"note": ["deep", {"k": "\x00"}]}},
        {"extra": {"key\x00": 1}},
    ],
)
def test_a_nul_anywhere_in_the_record_is_a_problem(fields: dict[str, Any]) -> None:
    assert shape_problems(parsed(**fields)) == ["the record contains a NUL character"]


def test_the_text_of_an_escaped_nul_is_no_nul() -> None:
    """A backslash followed by u0000 is six ordinary characters, which the database stores."""
    assert shape_problems(parsed(question="\\u0000", extra={"k": "\\u0000"})) == []
