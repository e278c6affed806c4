"""Where an import reads from: a local file or folder, a zip archive, or an S3 prefix.

Every source is reduced to the same shape: a local copy of the dataset file (so readers can
seek, and Parquet can be read by row group) and a function that reads one media file by the
relative path a record gives, refusing paths that leave the source.
"""

from __future__ import annotations

import codecs
import csv
import os
import posixpath
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.utils.translation import gettext as _

from annotation.archives import ArchiveError, SafeZip, normalise_member_path
from annotation.formats.records import FormatError
from annotation.formats.textio import read_json_document
from annotation.imports.formats import ImportFormat

ZIP_MAGIC = b"PK\x03\x04"
PARQUET_MAGIC = b"PAR1"
_COPY_CHUNK = 1024 * 1024


class SourceError(Exception):
    """A source that cannot be read as a whole; the message is shown to the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class MediaMissing(Exception):
    """A media file a record names cannot be read; the message is shown to the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# Reads a media file by the path a record gives, refusing more than max_bytes.
MediaReader = Callable[[str, int], bytes]


@dataclass
class OpenedSource:
    dataset_path: Path
    name: str
    read_media: MediaReader


def clean_relative_path(path: str) -> str:
    """A record's media path in canonical relative form; MediaMissing if it leaves the source."""
    candidate = path.strip().replace("\\", "/")
    if posixpath.isabs(candidate):
        raise MediaMissing(
            _("the media path '%(path)s' is absolute; give it relative to the dataset file")
            % {"path": path}
        )
    try:
        return normalise_member_path(posixpath.normpath(candidate))
    except ArchiveError as exc:
        raise MediaMissing(exc.message) from exc


def _too_big(path: str, size: int, limit: int) -> MediaMissing:
    return MediaMissing(
        _("the media file '%(path)s' has %(size)s bytes, more than the limit of %(limit)s")
        % {"path": path, "size": size, "limit": limit}
    )


def _not_found(path: str) -> MediaMissing:
    return MediaMissing(_("the media file '%(path)s' is not in the source") % {"path": path})


def _within(real: Path, roots: Sequence[Path]) -> bool:
    return any(real.is_relative_to(root) for root in roots)


def _real_path(path: Path, roots: Sequence[Path] | None, shown: str) -> Path:
    """The path with every link resolved; SourceError when it leaves the allowed roots."""
    real = path.resolve()
    if roots is not None and not _within(real, roots):
        raise SourceError(
            _(
                "'%(name)s' is, or is reached through, a link to a place outside the folders "
                "imports may read from (IMPORT_SERVER_ROOTS); copy the file itself there"
            )
            % {"name": shown}
        )
    return real


def _pick_dataset_file(names: list[str], fmt: ImportFormat, wanted: str) -> str:
    """The one dataset file among a folder's, archive's or prefix's files."""
    if wanted:
        matches = [n for n in names if n == wanted or n.endswith("/" + wanted)]
        if len(matches) == 1:
            return matches[0]
        raise SourceError(_("the source has no file named '%(name)s'") % {"name": wanted})
    candidates = [
        n
        for n in names
        if n.lower().endswith(fmt.suffixes) and not posixpath.basename(n).startswith(".")
    ]
    if not candidates:
        raise SourceError(
            _("the source holds no %(suffixes)s file for the format %(format)s")
            % {"suffixes": " / ".join(fmt.suffixes), "format": fmt.code}
        )
    shallowest = min(n.count("/") for n in candidates)
    top = [n for n in candidates if n.count("/") == shallowest]
    if len(top) > 1:
        raise SourceError(
            _("the source holds several possible dataset files (%(names)s); name the one to import")
            % {"names": ", ".join(sorted(top)[:5])}
        )
    return top[0]


def _local_reader(base: Path, roots: Sequence[Path] | None = None) -> MediaReader:
    """Reads media under `base`; every file's real path must lie there (and under `roots`)."""
    root = base.resolve()

    def read(path: str, max_bytes: int) -> bytes:
        relative = clean_relative_path(path)
        target = (root / relative).resolve()
        if not target.is_relative_to(root) or (roots is not None and not _within(target, roots)):
            # The path itself stays inside (clean_relative_path), so a link led it out.
            raise MediaMissing(
                _(
                    "the media file '%(path)s' is a link to a file outside the folder of the "
                    "dataset file; imports read only the files inside it"
                )
                % {"path": path}
            )
        if not target.is_file():
            raise _not_found(path)
        size = target.stat().st_size
        if size > max_bytes:
            raise _too_big(path, size, max_bytes)
        return target.read_bytes()

    return read


def _no_media_reader(name: str) -> MediaReader:
    def read(path: str, max_bytes: int) -> bytes:
        raise MediaMissing(
            _(
                "the record names the media file '%(path)s', but '%(name)s' was uploaded alone; "
                "upload a zip holding the dataset file and its media"
            )
            % {"path": path, "name": name}
        )

    return read


def _zip_reader(archive: SafeZip, folder: str) -> MediaReader:
    members = set(archive.names())

    def read(path: str, max_bytes: int) -> bytes:
        relative = clean_relative_path(path)
        member = posixpath.join(folder, relative) if folder else relative
        if member not in members:
            member = archive.resolve(relative) or ""
        if not member:
            raise _not_found(path)
        try:
            with archive.open(member) as stream:
                data = stream.read(max_bytes + 1)
        except ArchiveError as exc:
            raise MediaMissing(exc.message) from exc
        if len(data) > max_bytes:
            raise _too_big(path, len(data), max_bytes)
        return bytes(data)

    return read


def _copy_to(stream: IO[bytes], target: Path) -> None:
    with open(target, "wb") as out:
        shutil.copyfileobj(stream, out, _COPY_CHUNK)


def _head(path: Path, size: int) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(size)


@contextmanager
def open_local(
    path: Path,
    fmt: ImportFormat,
    *,
    wanted: str = "",
    media_allowed: bool = True,
    roots: Sequence[Path] | None = None,
) -> Iterator[OpenedSource]:
    """A dataset file, a folder holding one, or a zip archive on this machine.

    With `roots` (resolved folders), every file read (the dataset file and each media file)
    must have its real path, links resolved, under one of them; None reads anywhere (an
    operator's command, or an upload already in the site's storage).
    """
    _real_path(path, roots, str(path))
    if path.is_dir():
        names = sorted(
            str(p.relative_to(path)).replace(os.sep, "/") for p in path.rglob("*") if p.is_file()
        )
        name = _pick_dataset_file(names, fmt, wanted)
        chosen = _real_path(path / name, roots, name)
        media = _local_reader((path / name).parent, roots)
        yield OpenedSource(chosen, posixpath.basename(name), media)
        return
    if not path.is_file():
        raise SourceError(_("there is no file or folder at '%(path)s'") % {"path": path})
    real = _real_path(path, roots, path.name)
    if _head(real, 4) == ZIP_MAGIC:
        with open_zip(real, fmt, wanted=wanted) as opened:
            yield opened
        return
    reader = _local_reader(path.parent, roots) if media_allowed else _no_media_reader(path.name)
    yield OpenedSource(real, path.name, reader)


@contextmanager
def open_zip(path: Path, fmt: ImportFormat, *, wanted: str = "") -> Iterator[OpenedSource]:
    try:
        archive = SafeZip(path)
    except ArchiveError as exc:
        raise SourceError(exc.message) from exc
    with ExitStack() as stack:
        stack.enter_context(archive)
        member = _pick_dataset_file(archive.names(), fmt, wanted)
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="import-"))
        local = Path(folder) / posixpath.basename(member)
        try:
            with archive.open(member) as stream:
                _copy_to(stream, local)
        except ArchiveError as exc:
            raise SourceError(exc.message) from exc
        yield OpenedSource(local, member, _zip_reader(archive, posixpath.dirname(member)))


def parse_s3_url(url: str) -> tuple[str, str]:
    """(bucket, prefix) of an s3://bucket/prefix URL; SourceError when it is not one."""
    if not url.startswith("s3://"):
        raise SourceError(_("'%(url)s' is not an s3://bucket/prefix address") % {"url": url})
    bucket, _sep, prefix = url[len("s3://") :].partition("/")
    if not bucket:
        raise SourceError(_("'%(url)s' names no bucket") % {"url": url})
    return bucket, prefix.strip("/")


def s3_client() -> Any:
    """A boto3 client for import sources, configured from the S3_* settings."""
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=settings.S3_ENDPOINT_URL,
        region_name=settings.S3_REGION,
        aws_access_key_id=settings.S3_ACCESS_KEY_ID or None,
        aws_secret_access_key=settings.S3_SECRET_ACCESS_KEY or None,
    )


def _s3_reader(client: Any, bucket: str, folder: str) -> MediaReader:
    from botocore.exceptions import ClientError

    def read(path: str, max_bytes: int) -> bytes:
        relative = clean_relative_path(path)
        key = posixpath.join(folder, relative) if folder else relative
        try:
            response = client.get_object(Bucket=bucket, Key=key)
        except ClientError as exc:
            raise _not_found(path) from exc
        size = int(response.get("ContentLength") or 0)
        body = response["Body"]
        try:
            if size > max_bytes:
                raise _too_big(path, size, max_bytes)
            return bytes(body.read(max_bytes + 1))
        finally:
            body.close()

    return read


@contextmanager
def open_s3(url: str, fmt: ImportFormat, *, wanted: str = "") -> Iterator[OpenedSource]:
    """A dataset file and its media under an S3 prefix; a zip there is read like an upload."""
    from botocore.exceptions import BotoCoreError, ClientError

    bucket, prefix = parse_s3_url(url)
    client = s3_client()
    keys: list[str] = []
    try:
        pages = client.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix + "/" if prefix else ""
        )
        for page in pages:
            keys.extend(item["Key"] for item in page.get("Contents", []))
    except (BotoCoreError, ClientError) as exc:
        raise SourceError(
            _("the S3 prefix '%(url)s' cannot be listed (%(detail)s)") % {"url": url, "detail": exc}
        ) from exc
    if not keys:
        raise SourceError(_("there are no files under '%(url)s'") % {"url": url})
    strip = len(prefix) + 1 if prefix else 0
    names = [key[strip:] for key in keys]
    zips = [n for n in names if n.lower().endswith(".zip")]
    is_zip_only = len(zips) == 1 and not any(n.lower().endswith(fmt.suffixes) for n in names)
    chosen = zips[0] if is_zip_only else _pick_dataset_file(names, fmt, wanted)
    key = posixpath.join(prefix, chosen) if prefix else chosen
    with tempfile.TemporaryDirectory(prefix="import-") as folder:
        local = Path(folder) / posixpath.basename(chosen)
        try:
            client.download_file(bucket, key, str(local))
        except (BotoCoreError, ClientError) as exc:
            raise SourceError(
                _("'%(key)s' cannot be downloaded (%(detail)s)") % {"key": key, "detail": exc}
            ) from exc
        if is_zip_only:
            with open_zip(local, fmt, wanted=wanted) as opened:
                yield opened
            return
        yield OpenedSource(local, chosen, _s3_reader(client, bucket, posixpath.dirname(key)))


def _count_lines(path: Path) -> int:
    """Non-blank lines of a UTF-8 text file, checking the encoding on the way."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
    count = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = decoder.decode(raw)
            except UnicodeDecodeError as exc:
                raise FormatError(
                    _(
                        "the file is not UTF-8 text (the first undecodable byte is on line "
                        "%(row)s); save it as UTF-8 and import it again"
                    )
                    % {"row": number}
                ) from exc
            if text.strip().lstrip("\ufeff"):
                count += 1
    return count


def _count_tsv(path: Path) -> int:
    # Real TSVs carry base64 images far above csv's default field limit of 128 KiB.
    csv.field_size_limit(2**31 - 1)
    with open(path, encoding="utf-8-sig", errors="strict", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quotechar='"')
        try:
            rows = sum(1 for cells in reader if any(cell.strip() for cell in cells))
        except UnicodeDecodeError as exc:
            raise FormatError(
                _("the file is not UTF-8 text; save it as UTF-8 and import it again")
            ) from exc
        except csv.Error as exc:
            raise FormatError(
                _("line %(row)s: the file is not a well-formed TSV (%(detail)s)")
                % {"row": reader.line_num, "detail": exc}
            ) from exc
    return max(rows - 1, 0)


def count_rows(path: Path, fmt: ImportFormat) -> int:
    """How many records the dataset file holds, read once before importing.

    Also refuses, before anything is written, a file that is empty or not UTF-8 text.
    """
    if fmt.counting == "parquet_or_lines" and _head(path, 4) == PARQUET_MAGIC:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return int(pq.ParquetFile(path).metadata.num_rows)
        except (pa.ArrowInvalid, OSError) as exc:
            raise FormatError(
                _("the file is not a readable Parquet file (%(detail)s)") % {"detail": exc}
            ) from exc
    if fmt.counting == "json":
        document = read_json_document(path)
        if not isinstance(document, dict | list):
            return 0  # the reader explains what is wrong with it
        count = len(document)
    elif fmt.counting == "tsv":
        count = _count_tsv(path)
    else:
        count = _count_lines(path)
    if count == 0:
        if not _head(path, 64 * 1024).strip(b" \t\r\n\xef\xbb\xbf"):
            raise FormatError(_("the file is empty"))
        raise FormatError(_("the file holds no records"))
    return count
