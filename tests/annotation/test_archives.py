"""Tests for the safe zip reader."""

import io
import stat
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest

from annotation.archives import ArchiveError, SafeZip, normalise_member_path

LIMITS: dict[str, Any] = {
    "max_members": 100,
    "max_total_bytes": 10 * 1024 * 1024,
    "max_ratio": 100.0,
}


def make_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=zipfile.ZIP_DEFLATED)
    return path


def test_ordinary_archive_lists_and_reads_members(tmp_path: Path) -> None:
    """Files are listed without folders, read whole or streamed, and found by record path."""
    path = make_zip(
        tmp_path / "ok.zip",
        {"data/": b"", "data/images/a.png": b"png-a", "data/samples.jsonl": b"{}\n"},
    )
    with SafeZip(path, **LIMITS) as archive:
        assert archive.names() == ["data/images/a.png", "data/samples.jsonl"]
        assert archive.read("data/images/a.png") == b"png-a"
        with archive.open("data/samples.jsonl") as stream:
            assert stream.read() == b"{}\n"
        assert archive.resolve("./images\\a.png") == "data/images/a.png"
        assert archive.resolve("data/images/a.png") == "data/images/a.png"
        assert archive.resolve("images/missing.png") is None
        assert archive.resolve("../a.png") is None
        with pytest.raises(ArchiveError, match="no member"):
            archive.read("nope")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../evil.txt", "outside the archive"),
        ("images/../../evil.txt", "outside the archive"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows/evil.txt", "absolute"),
        ("..\\evil.txt", "backslash"),
    ],
)
def test_path_tricks_are_refused(tmp_path: Path, name: str, reason: str) -> None:
    """Members that could escape the extraction folder make the whole archive refused."""
    path = make_zip(tmp_path / "evil.zip", {"ok.txt": b"ok", name: b"evil"})
    with pytest.raises(ArchiveError, match=reason):
        SafeZip(path, **LIMITS)


def test_symlink_member_is_refused(tmp_path: Path) -> None:
    """A member whose Unix mode marks it as a symbolic link is refused."""
    path = tmp_path / "link.zip"
    with zipfile.ZipFile(path, "w") as archive:
        info = zipfile.ZipInfo("link")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    with pytest.raises(ArchiveError, match="symbolic link"):
        SafeZip(path, **LIMITS)


def test_zip_bomb_is_refused_by_ratio(tmp_path: Path) -> None:
    """A highly compressible large member is refused as a possible zip bomb."""
    path = make_zip(tmp_path / "bomb.zip", {"zeros.bin": b"\0" * (5 * 1024 * 1024)})
    assert path.stat().st_size < 50_000
    with pytest.raises(ArchiveError, match="zip bomb"):
        SafeZip(path, **LIMITS)


def test_declared_total_over_the_limit_is_refused(tmp_path: Path) -> None:
    """The sum of declared sizes is checked against the limit before reading."""
    path = make_zip(tmp_path / "big.zip", {"a": b"x" * 2000, "b": b"y" * 2000})
    with pytest.raises(ArchiveError, match="more than the limit of 3000 bytes"):
        SafeZip(path, max_members=10, max_total_bytes=3000, max_ratio=1000)


def test_too_many_members_are_refused(tmp_path: Path) -> None:
    """An archive with more members than allowed is refused."""
    path = make_zip(tmp_path / "many.zip", {f"f{i}": b"" for i in range(5)})
    with pytest.raises(ArchiveError, match="5 members, more than the limit of 4"):
        SafeZip(path, max_members=4, max_total_bytes=10**6, max_ratio=100)


def test_encrypted_member_is_refused(tmp_path: Path) -> None:
    """A member with the encryption flag set is refused."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as archive:
        archive.writestr("secret.txt", b"not really encrypted")
    # zipfile cannot write encrypted members: set the flag bit in both headers afterwards.
    patched = bytearray(raw.getvalue())
    patched[patched.index(b"PK\x03\x04") + 6] |= 0x1
    patched[patched.index(b"PK\x01\x02") + 8] |= 0x1
    path = tmp_path / "enc.zip"
    path.write_bytes(bytes(patched))
    with pytest.raises(ArchiveError, match="encrypted"):
        SafeZip(path, **LIMITS)


def test_lying_header_is_caught_while_reading(tmp_path: Path) -> None:
    """A member whose header understates its size fails while it is read."""
    data = b"abcdefgh" * 1000
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("m.txt", data)
    patched = bytearray(raw.getvalue())
    # Rewrite the uncompressed size to 100 bytes in both the local and the central header.
    local = patched.index(b"PK\x03\x04")
    patched[local + 22 : local + 26] = struct.pack("<I", 100)
    central = patched.index(b"PK\x01\x02")
    patched[central + 24 : central + 28] = struct.pack("<I", 100)
    path = tmp_path / "liar.zip"
    path.write_bytes(bytes(patched))
    with SafeZip(path, **LIMITS) as archive:
        with pytest.raises(ArchiveError, match=r"'m\.txt' is damaged"):
            archive.read("m.txt")
        with pytest.raises(ArchiveError), archive.open("m.txt") as stream:
            stream.read()


def test_reading_is_limited_across_members(tmp_path: Path) -> None:
    """Bytes actually read count against the total limit, whatever the headers say."""
    path = make_zip(tmp_path / "two.zip", {"a": b"1" * 600, "b": b"2" * 600})
    archive = SafeZip(path, max_members=10, max_total_bytes=1500, max_ratio=1000)
    archive.read("a")
    archive.read("b")
    with pytest.raises(ArchiveError, match="reading the archive produced more"):
        archive.read("a")
    archive.close()


def test_not_a_zip_is_refused(tmp_path: Path) -> None:
    """A file that is not a zip archive gets a readable refusal."""
    path = tmp_path / "fake.zip"
    path.write_bytes(b"hello")
    with pytest.raises(ArchiveError, match="not a readable zip archive"):
        SafeZip(path, **LIMITS)


def test_normalise_member_path() -> None:
    """Redundant separators and "." components are removed."""
    assert normalise_member_path("./a//b/./c.png") == "a/b/c.png"
    with pytest.raises(ArchiveError):
        normalise_member_path("a/../../b")
