"""Streaming a stored file with HTTP Range support, so audio can seek without a full download."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_CHUNK = 64 * 1024


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """The (first, last) byte of a single-range header, None if absent; ValueError if unsatisfiable.

    Multi-range requests are answered with the whole file (allowed by RFC 9110).
    """
    match = _RANGE.match(header.strip())
    if not match:
        return None
    first_text, last_text = match.groups()
    if not first_text and not last_text:
        return None
    if not first_text:  # suffix range: the last N bytes
        length = int(last_text)
        if length == 0:
            raise ValueError("empty suffix range")
        return max(size - length, 0), size - 1
    first = int(first_text)
    last = int(last_text) if last_text else size - 1
    if first >= size or last < first:
        raise ValueError("range not satisfiable")
    return first, min(last, size - 1)


def _stream(handle: IO[bytes], first: int, length: int) -> Iterator[bytes]:
    try:
        handle.seek(first)
        remaining = length
        while remaining > 0:
            chunk = handle.read(min(_CHUNK, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            yield chunk
    finally:
        handle.close()


def ranged_file_response(
    request: HttpRequest, handle: IO[bytes], *, size: int, content_type: str
) -> HttpResponseBase:
    """A 200 with the whole file, a 206 with the requested range, or a 416."""
    try:
        byte_range = parse_range(request.headers.get("Range", ""), size)
    except ValueError:
        handle.close()
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
        return response
    first, last = byte_range if byte_range else (0, size - 1)
    length = max(last - first + 1, 0)
    streaming = StreamingHttpResponse(
        _stream(handle, first, length),
        status=206 if byte_range else 200,
        content_type=content_type,
    )
    streaming["Content-Length"] = str(length)
    streaming["Accept-Ranges"] = "bytes"
    streaming["Cache-Control"] = "private, max-age=3600"
    streaming["X-Content-Type-Options"] = "nosniff"
    if byte_range:
        streaming["Content-Range"] = f"bytes {first}-{last}/{size}"
    return streaming
