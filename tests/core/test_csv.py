"""The shared CSV writer: text that a spreadsheet would run as a formula is written as text."""

from __future__ import annotations

import csv
import io

import pytest

from core import csv as safe_csv


@pytest.mark.parametrize(
    "text", ["=1+1", "+1", "-1", "@SUM(A1)", "\tcmd", "\rcmd", '=HYPERLINK("x")']
)
def test_text_starting_like_a_formula_gets_an_apostrophe(text: str) -> None:
    """Each of = + - @ tab and carriage return at the start is neutralised."""
    assert safe_csv.safe_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["plain", "a=b", "", " =1", -0.25, -3, None, 1.5])
def test_other_cells_and_numbers_are_unchanged(value: object) -> None:
    """Ordinary text, text with a formula sign later on, and numbers (negative too) stay."""
    assert safe_csv.safe_cell(value) == value


def test_writer_neutralises_every_cell_of_every_row() -> None:
    """Rows written through the writer read back with the apostrophes and the numbers."""
    stream = io.StringIO()
    writer = safe_csv.writer(stream)
    writer.writerow(["name", "value"])
    writer.writerows([["=cmd|' /C calc'!A0", -0.5], ["\tname", 3]])
    rows = list(csv.reader(io.StringIO(stream.getvalue())))
    assert rows == [["name", "value"], ["'=cmd|' /C calc'!A0", "-0.5"], ["'\tname", "3"]]


def test_writerow_returns_the_stream_write_result_for_streaming() -> None:
    """A writer on an echoing stream hands back each line, as streaming responses need."""

    class Echo:
        def write(self, text: str) -> str:
            return text

    assert safe_csv.writer(Echo()).writerow(["@x", 1]) == "'@x,1\r\n"
