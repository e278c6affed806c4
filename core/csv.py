"""CSV files the site writes for people: every text cell is safe to open in a spreadsheet.

A cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as a
formula by Excel, LibreOffice and Google Sheets (CSV injection); such a cell gets a leading
apostrophe, which spreadsheets show as text. Numbers are written as they are (a negative
statistic stays a number). Release files meant for machines (the snapshot TSV) are data, not
reports, and are written verbatim by their exporters instead.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any, Protocol

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class _Writable(Protocol):
    def write(self, text: str, /) -> Any: ...


def safe_cell(value: object) -> object:
    """The value a spreadsheet shows as text: text starting like a formula gets a ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class SafeWriter:
    """csv.writer whose rows have every cell passed through ``safe_cell``."""

    def __init__(self, stream: _Writable, **options: Any) -> None:
        self._writer = csv.writer(stream, **options)

    def writerow(self, row: Iterable[object]) -> Any:
        """Write one row; returns what the stream's write returned (for streaming)."""
        return self._writer.writerow([safe_cell(value) for value in row])

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(stream: _Writable, **options: Any) -> SafeWriter:
    """A CSV writer for files people open in spreadsheets (options as for csv.writer)."""
    return SafeWriter(stream, **options)
