"""Line and JSON-line readers for UTF-8 text, with or without a byte order mark.

Every reader streams: a file is never read whole into memory.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any, cast

from annotation.formats.records import (
    FormatError,
    NotThisFormat,
    RowError,
    hostile_problem,
    message,
    require_fields,
    too_deep_problem,
)
from core.limits import TooDeep

# A path, or an open file in binary or text mode.
Source = str | os.PathLike[str] | IO[bytes] | IO[str]

BOM = "\ufeff"


def source_name(source: Source) -> str:
    """The file name of a source, or "" for an anonymous stream."""
    if isinstance(source, str | os.PathLike):
        return os.path.basename(os.fspath(source))
    name = getattr(source, "name", "")
    return os.path.basename(name) if isinstance(name, str) else ""


@contextmanager
def open_text(source: Source) -> Iterator[IO[str]]:
    """Open a source as strict UTF-8 text with universal newlines left to the caller.

    `newline=""` keeps embedded line breaks inside quoted CSV cells intact. A BOM is
    removed by the "utf-8-sig" codec for binary input and by `iter_lines` for text input.
    """
    if isinstance(source, str | os.PathLike):
        with open(source, encoding="utf-8-sig", errors="strict", newline="") as handle:
            yield handle
        return
    if isinstance(source, io.TextIOBase):
        yield cast(IO[str], source)
        return
    wrapper = io.TextIOWrapper(
        cast(IO[bytes], source),
        encoding="utf-8-sig",
        errors="strict",
        newline="",
    )
    try:
        yield wrapper
    finally:
        # Leave the caller's stream open: it owns it.
        wrapper.detach()


def not_utf8_error(row: int) -> FormatError:
    """The error for a file that is not UTF-8 text."""
    return FormatError(
        message(
            "the file is not UTF-8 text (the first undecodable byte is near line {row}); "
            "save it as UTF-8 and import it again",
            row=row,
        )
    )


def iter_lines(source: Source) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without its line break), decoding strictly."""
    row = 0
    with open_text(source) as handle:
        try:
            for raw in handle:
                row += 1
                line = raw.rstrip("\r\n")
                if row == 1 and line.startswith(BOM):
                    line = line[1:]
                yield row, line
        except UnicodeDecodeError as exc:
            raise not_utf8_error(row + 1) from exc


def iter_json_objects(source: Source) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    """Yield (line, object) for each non-blank JSON line, or a RowError for a broken line.

    A line that is JSON but cannot be stored (a NUL character, nesting past the API's limit:
    ``hostile_problem``) is a RowError of its own. Raises FormatError for a file with no
    content at all, and NotThisFormat for a file that is not JSON lines (a JSON array, or
    first two lines that are not JSON, as in a pretty-printed document or a file of another
    kind), instead of an error on every line.
    """
    seen = False
    pending: RowError | None = None  # the first line's error, until the second line tells
    for row, line in iter_lines(source):
        if not line.strip():
            continue
        first = not seen
        seen = True
        item = _json_line(row, line)
        if isinstance(item, _Hostile):
            # JSON, so the file is JSON lines: an earlier broken first line is a row's error.
            if pending is not None:
                yield pending.row, pending
                pending = None
            yield row, item.error
            continue
        if isinstance(item, list):
            if first:
                raise NotThisFormat(
                    message("the file is one JSON array, not JSON lines (one object per line)")
                )
            item = RowError(row, "", message("line {row}: this line is not a JSON object", row=row))
        if isinstance(item, RowError):
            if first:
                pending = item
                continue
            if pending is not None:
                raise NotThisFormat(
                    message(
                        "the file is not JSON lines: neither of its first two lines is a JSON "
                        "object on a line of its own (is it a pretty-printed JSON document or "
                        "a file of another kind?)"
                    )
                )
            yield row, item
            continue
        if pending is not None:
            yield pending.row, pending
            pending = None
        yield row, item
    if pending is not None:
        yield pending.row, pending
    if not seen:
        raise FormatError(message("the file is empty"))


class _Hostile:
    """A line that is JSON but cannot be stored, with its row's error."""

    def __init__(self, error: RowError) -> None:
        self.error = error


def _line_error(row: int, problem: str) -> RowError:
    return RowError(row, "", message("line {row}: {problem}", row=row, problem=problem))


def _json_line(row: int, line: str) -> dict[str, Any] | list[Any] | RowError | _Hostile:
    """One line as a JSON object (a list is returned as such), or the RowError saying why not
    (wrapped in _Hostile when the line is JSON that cannot be stored)."""
    try:
        value = json.loads(line)
    except RecursionError:
        return _Hostile(_line_error(row, too_deep_problem()))
    except ValueError as exc:
        return RowError(
            row,
            "",
            message("line {row}: this line is not valid JSON ({detail})", row=row, detail=exc),
        )
    if isinstance(value, dict | list):
        problem = hostile_problem(value)
        if problem is not None:
            return _Hostile(_line_error(row, problem))
        return value
    return RowError(row, "", message("line {row}: this line is not a JSON object", row=row))


def read_json_document(source: Source) -> Any:
    """Load a whole JSON document (for modest dict-shaped files such as LogicVista's).

    A member nested too deep for the parser (about a thousand levels: a RecursionError) is
    left out as a ``TooDeep`` in its place, within the document's first two levels, so the
    reader refuses that item and reads the others (``hostile_problem`` names it).
    """
    with open_text(source) as handle:
        try:
            text = handle.read()
        except UnicodeDecodeError as exc:
            raise not_utf8_error(1) from exc
    text = text.removeprefix(BOM)
    if not text.strip():
        raise FormatError(message("the file is empty"))
    try:
        return _load_members(text, levels=2)
    except ValueError as exc:
        raise FormatError(message("the file is not valid JSON ({detail})", detail=exc)) from exc


# A JSON string, or one of the characters that shape a document.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]')


def _load_members(text: str, *, levels: int) -> Any:
    """``json.loads(text)``; on a RecursionError, the top container's members are loaded one
    by one (to ``levels`` levels down) and those still too deep become TooDeep."""
    try:
        return json.loads(text)
    except RecursionError:
        stripped = text.strip()
        if levels == 0 or stripped[:1] not in ("[", "{"):
            return TooDeep()
    is_object = stripped[0] == "{"
    members: list[tuple[str | None, Any]] = []
    key: str | None = None
    start, depth = 1, 0
    for token in _TOKEN.finditer(stripped):
        mark = token.group()
        if mark in ("[", "{"):
            depth += 1
        elif mark in ("]", "}"):
            depth -= 1
            if depth == 0:
                members.append(_member(stripped[start : token.start()], key, levels))
                break
        elif depth == 1 and mark == ":" and is_object:
            key = json.loads(stripped[start : token.start()])
            start = token.end()
        elif depth == 1 and mark == ",":
            members.append(_member(stripped[start : token.start()], key, levels))
            start, key = token.end(), None
    else:
        raise ValueError(message("the document ends before its last bracket"))
    members = [(k, v) for k, v in members if v is not _EMPTY]
    if is_object:
        return {str(k): v for k, v in members}
    return [v for _k, v in members]


_EMPTY = object()


def _member(text: str, key: str | None, levels: int) -> tuple[str | None, Any]:
    if not text.strip():
        return key, _EMPTY  # the empty container "[]" or "{}"
    return key, _load_members(text, levels=levels - 1)


def peek_bytes(source: Source, size: int) -> bytes:
    """The first bytes of a path or seekable binary stream (b"" if it cannot be peeked)."""
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as handle:
            return handle.read(size)
    if isinstance(source, io.TextIOBase) or not source.seekable():
        return b""
    position = source.tell()
    head = source.read(size)
    source.seek(position)
    return head if isinstance(head, bytes) else codecs.encode(head, "utf-8")


def iter_json_records(
    source: Source, required: list[tuple[str, ...]], *, expected: str
) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    """``iter_json_objects`` of a format whose first object must have the ``required`` fields
    (one name of each group): another kind of file is refused whole (see require_fields)."""
    first = True
    for row, record in iter_json_objects(source):
        if first and not isinstance(record, RowError):
            require_fields(record, required, expected=expected)
            first = False
        yield row, record
