"""A zip reader for uploaded archives that refuses path tricks, links, encryption and
decompression bombs, and enforces its size limits while reading, not only from headers.
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import stat
import zipfile
import zlib
from types import TracebackType
from typing import IO

from annotation.formats.records import message

# Tiny members may legitimately compress very well; the ratio check starts above this.
RATIO_CHECK_MIN_BYTES = 64 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")
_CHUNK = 64 * 1024


class ArchiveError(Exception):
    """An archive that must be refused; the message is shown to the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def normalise_member_path(path: str) -> str:
    """A relative archive path in canonical form ("a/b.png"); ArchiveError if unsafe.

    Refuses absolute paths, drive letters, backslashes, NUL bytes and ".." components,
    all of which can make an extracted path escape its folder.
    """
    if "\x00" in path:
        raise ArchiveError(message("the path '{path}' contains a NUL character", path=path))
    if "\\" in path:
        raise ArchiveError(
            message("the path '{path}' contains a backslash, which is not allowed", path=path)
        )
    if path.startswith("/") or _DRIVE.match(path):
        raise ArchiveError(message("the path '{path}' is absolute", path=path))
    parts = [part for part in path.split("/") if part not in {"", "."}]
    if ".." in parts:
        raise ArchiveError(
            message("the path '{path}' points outside the archive with '..'", path=path)
        )
    if not parts:
        raise ArchiveError(message("the path '{path}' is empty", path=path))
    return "/".join(parts)


class _LimitedReader(io.RawIOBase):
    """Reads a member and fails as soon as it yields more bytes than allowed."""

    def __init__(self, inner: IO[bytes], name: str, limit: int, owner: SafeZip) -> None:
        self._inner, self._name, self._limit, self._owner = inner, name, limit, owner
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            data = self._inner.read(len(buffer))
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise ArchiveError(
                message("the member '{name}' is damaged ({detail})", name=self._name, detail=exc)
            ) from exc
        self._count += len(data)
        self._owner._account(len(data))
        if self._count > self._limit:
            raise ArchiveError(
                message(
                    "the member '{name}' holds more data than its header declares",
                    name=self._name,
                )
            )
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


class SafeZip:
    """A zip archive checked member by member on opening.

    Every refusal raises ArchiveError with a readable message.
    """

    def __init__(
        self,
        path_or_file: str | os.PathLike[str] | IO[bytes],
        *,
        max_members: int = 100_000,
        max_total_bytes: int = 4 * 1024**3,
        max_ratio: float = 100.0,
    ) -> None:
        self.max_total_bytes = max_total_bytes
        self._read_bytes = 0
        try:
            self._zip = zipfile.ZipFile(path_or_file)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise ArchiveError(message("the file is not a readable zip archive")) from exc
        try:
            self._members = self._check(max_members, max_total_bytes, max_ratio)
        except ArchiveError:
            self._zip.close()
            raise

    def _check(
        self, max_members: int, max_total_bytes: int, max_ratio: float
    ) -> dict[str, zipfile.ZipInfo]:
        infos = self._zip.infolist()
        if len(infos) > max_members:
            raise ArchiveError(
                message(
                    "the archive has {count} members, more than the limit of {limit}",
                    count=len(infos),
                    limit=max_members,
                )
            )
        members: dict[str, zipfile.ZipInfo] = {}
        total = 0
        for info in infos:
            name = normalise_member_path(info.filename)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ArchiveError(
                    message("the member '{name}' is a symbolic link", name=info.filename)
                )
            if info.flag_bits & 0x1:
                raise ArchiveError(message("the member '{name}' is encrypted", name=info.filename))
            if info.is_dir():
                continue
            if name in members:
                raise ArchiveError(message("the archive holds '{name}' more than once", name=name))
            total += info.file_size
            if total > max_total_bytes:
                raise ArchiveError(
                    message(
                        "the archive unpacks to more than the limit of {limit} bytes",
                        limit=max_total_bytes,
                    )
                )
            if info.file_size >= RATIO_CHECK_MIN_BYTES and info.file_size > max_ratio * max(
                info.compress_size, 1
            ):
                raise ArchiveError(
                    message(
                        "the member '{name}' is compressed more than {ratio}:1, "
                        "which is refused as a possible zip bomb",
                        name=info.filename,
                        ratio=int(max_ratio),
                    )
                )
            members[name] = info
        return members

    def _account(self, size: int) -> None:
        self._read_bytes += size
        if self._read_bytes > self.max_total_bytes:
            raise ArchiveError(
                message(
                    "reading the archive produced more than the limit of {limit} bytes",
                    limit=self.max_total_bytes,
                )
            )

    def names(self) -> list[str]:
        """The normalised paths of the file members (folders left out), in archive order."""
        return list(self._members)

    def resolve(self, path: str) -> str | None:
        """The member a record's relative path refers to, or None if there is none.

        The path is normalised ("./images\\a.png" → "images/a.png"); an archive that wraps
        everything in one top folder is also matched by the unique member ending in the path.
        """
        candidate = path.strip().replace("\\", "/")
        try:
            candidate = normalise_member_path(posixpath.normpath(candidate))
        except ArchiveError:
            return None
        if candidate in self._members:
            return candidate
        matches = [name for name in self._members if name.endswith("/" + candidate)]
        return matches[0] if len(matches) == 1 else None

    def open(self, name: str) -> IO[bytes]:
        """A stream of one member's bytes that enforces the size limits while reading."""
        info = self._members.get(name)
        if info is None:
            raise ArchiveError(message("the archive has no member '{name}'", name=name))
        inner = self._zip.open(info)
        return io.BufferedReader(_LimitedReader(inner, name, info.file_size, self), _CHUNK)

    def read(self, name: str) -> bytes:
        """One member's bytes, read in chunks under the size limits."""
        parts: list[bytes] = []
        with self.open(name) as stream:
            while chunk := stream.read(_CHUNK):
                parts.append(chunk)
        return b"".join(parts)

    def close(self) -> None:
        """Close the underlying zip file."""
        self._zip.close()

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
