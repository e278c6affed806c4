"""An uploaded import's files on this machine: the file itself, or every file of a zip.

Used by the kinds of import whose rows sit in one or several plain files (model responses,
verdicts), where a zip holds several files to import one after the other (for example one
LogicVista answer file per model).
"""

from __future__ import annotations

import posixpath
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.core.files.storage import default_storage
from django.utils.text import get_valid_filename
from django.utils.translation import gettext as _

from annotation.archives import ArchiveError, SafeZip
from annotation.imports.sources import SourceError
from annotation.models import ImportJob

ZIP_MAGIC = b"PK\x03\x04"


def _local_copy(source: str, source_name: str, folder: Path) -> Path:
    if not default_storage.exists(source):
        raise SourceError(_("the uploaded file is no longer stored; upload it again"))
    try:
        return Path(default_storage.path(source))
    except NotImplementedError:  # remote storage: work on a local copy
        local = folder / (get_valid_filename(source_name) or "upload")
        with default_storage.open(source, "rb") as remote, open(local, "wb") as out:
            for chunk in remote.chunks():
                out.write(chunk)
        return local


def _members(archive: SafeZip, suffixes: tuple[str, ...]) -> list[str]:
    return sorted(
        name
        for name in archive.names()
        if name.lower().endswith(suffixes)
        and not posixpath.basename(name).startswith(".")
        and not name.startswith("__MACOSX/")
    )


@contextmanager
def open_upload_files(
    job: ImportJob, suffixes: tuple[str, ...], *, full_names: bool = False
) -> Iterator[list[tuple[str, Path]]]:
    """[(file name, local path)] of an uploaded job: its one file, or each file of a zip
    whose name ends with one of ``suffixes`` (in name order). SourceError when there is none,
    or when the zip is unreadable or unsafe. With ``full_names`` a zip's files are named by
    their path inside it (the harnesses' layouts say what a file is by its folders)."""
    with open_stored_files(job.source, job.source_name, suffixes, full_names=full_names) as files:
        yield files


@contextmanager
def open_stored_files(
    source: str, source_name: str, suffixes: tuple[str, ...], *, full_names: bool = False
) -> Iterator[list[tuple[str, Path]]]:
    """The files of an upload kept in the storage under ``source`` (see open_upload_files)."""
    with tempfile.TemporaryDirectory(prefix="import-upload-") as name:
        folder = Path(name)
        local = _local_copy(source, source_name, folder)
        with open_local_files(
            local, suffixes, folder, name=source_name, full_names=full_names
        ) as files:
            yield files


@contextmanager
def open_local_files(
    local: Path,
    suffixes: tuple[str, ...],
    folder: Path,
    *,
    name: str = "",
    full_names: bool = False,
) -> Iterator[list[tuple[str, Path]]]:
    """The files of a local file or zip (a zip's members extracted into ``folder``)."""
    with open(local, "rb") as handle:
        is_zip = handle.read(4) == ZIP_MAGIC
    if not is_zip:
        yield [(name or local.name, local)]
        return
    try:
        with SafeZip(local) as archive:
            members = _members(archive, suffixes)
            if not members:
                raise SourceError(
                    _("the archive holds no %(suffixes)s file") % {"suffixes": " / ".join(suffixes)}
                )
            files = []
            for index, member in enumerate(members):
                target = folder / f"{index}-{posixpath.basename(member)}"
                with archive.open(member) as stream, open(target, "wb") as out:
                    while block := stream.read(1024 * 1024):
                        out.write(block)
                files.append((member if full_names else posixpath.basename(member), target))
    except ArchiveError as exc:
        raise SourceError(exc.message) from exc
    yield files
