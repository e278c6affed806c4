"""Tests for the UTF-8 line and JSON-line readers."""

import io
import itertools
from pathlib import Path

import pytest

from annotation.formats.records import FormatError, NotThisFormat, RowError
from annotation.formats.textio import iter_json_objects, iter_lines, read_json_document


def test_bom_is_removed_from_the_first_line(tmp_path: Path) -> None:
    """A UTF-8 file with a BOM reads the same as one without."""
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + '{"id": "é1"}\n'.encode())
    assert list(iter_lines(path)) == [(1, '{"id": "é1"}')]
    assert list(iter_json_objects(path)) == [(1, {"id": "é1"})]


def test_text_stream_with_bom_is_accepted() -> None:
    """An already-decoded text stream that kept its BOM is read without it."""
    assert list(iter_lines(io.StringIO("\ufeffa\nb\n"))) == [(1, "a"), (2, "b")]


def test_binary_stream_stays_open_for_its_owner() -> None:
    """Reading a caller's binary stream does not close it."""
    stream = io.BytesIO(b"x\r\ny\n")
    assert list(iter_lines(stream)) == [(1, "x"), (2, "y")]
    assert not stream.closed


def test_non_utf8_file_is_a_format_error(tmp_path: Path) -> None:
    """A Latin-1 file is refused as a whole with a message naming UTF-8."""
    path = tmp_path / "latin1.jsonl"
    path.write_bytes('{"id": "1"}\n{"q": "café"}\n'.encode("latin-1"))
    with pytest.raises(FormatError, match="not UTF-8"):
        list(iter_json_objects(path))


def test_broken_json_line_is_a_row_error_and_reading_continues() -> None:
    """A broken line yields a RowError with its line number; later lines still parse."""
    stream = io.BytesIO(b'{"a": 1}\n{"a": \n\n[1]\n{"a": 3}\n')
    results = list(iter_json_objects(stream))
    assert results[0] == (1, {"a": 1})
    assert isinstance(results[1][1], RowError)
    assert results[1][1].message.startswith("line 2: this line is not valid JSON")
    assert isinstance(results[2][1], RowError)
    assert results[2][1].message == "line 4: this line is not a JSON object"
    assert results[3] == (5, {"a": 3})


def test_empty_file_is_a_format_error(tmp_path: Path) -> None:
    """A file with only blank lines is refused as empty."""
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n")
    with pytest.raises(FormatError, match="empty"):
        list(iter_json_objects(path))
    with pytest.raises(FormatError, match="empty"):
        read_json_document(path)


def test_invalid_json_document_is_a_format_error(tmp_path: Path) -> None:
    """A JSON document that does not parse is refused as a whole."""
    path = tmp_path / "bad.json"
    path.write_text('{"a": ')
    with pytest.raises(FormatError, match="not valid JSON"):
        read_json_document(path)


class EndlessLines(io.RawIOBase):
    """A binary stream that never ends, to prove readers do not read ahead to the end."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        line = b'{"id": "x"}\n'
        count = len(buffer) // len(line) * len(line) or len(buffer)
        buffer[:count] = (line * (count // len(line) + 1))[:count]
        return count


def test_json_lines_are_streamed() -> None:
    """The first records of an endless stream are yielded without reading it all."""
    stream = io.BufferedReader(EndlessLines())
    first = list(itertools.islice(iter_json_objects(stream), 3))
    assert first == [(1, {"id": "x"}), (2, {"id": "x"}), (3, {"id": "x"})]


def test_a_pretty_printed_document_is_not_json_lines() -> None:
    """Two unreadable first lines mean another kind of file: one NotThisFormat, no row errors."""
    text = '{\n  "v1_1": {"question": "?"}\n}\n'
    with pytest.raises(NotThisFormat, match="neither of its first two lines is a JSON object"):
        list(iter_json_objects(io.StringIO(text)))


def test_a_json_array_is_not_json_lines() -> None:
    """A JSON array on the first line is a whole document, not a file of JSON lines."""
    with pytest.raises(NotThisFormat, match="one JSON array, not JSON lines"):
        list(iter_json_objects(io.StringIO('[{"id": 1}, {"id": 2}]\n')))


def test_a_broken_first_line_before_good_ones_is_a_row_error() -> None:
    """Only the first line broken: its RowError comes first, then the good lines."""
    items = list(iter_json_objects(io.StringIO('{"id": \n{"id": 2}\n[3]\n')))
    assert [row for row, _item in items] == [1, 2, 3]
    assert isinstance(items[0][1], RowError) and items[1][1] == {"id": 2}
    assert isinstance(items[2][1], RowError)
    assert items[2][1].message == "line 3: this line is not a JSON object"
