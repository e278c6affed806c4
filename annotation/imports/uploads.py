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


def _local_copy(job: ImportJob, folder: Path) -> Path:
    if not default_storage.exists(job.source):
        raise SourceError(_("the uploaded file is no longer stored; upload it again"))
    try:
        return Path(default_storage.path(job.source))
    except NotImplementedError:  # remote storage: work on a local copy
        local = folder / (get_valid_filename(job.source_name) or "upload")
        with default_storage.open(job.source, "rb") as remote, open(local, "wb") as out:
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
    job: ImportJob, suffixes: tuple[str, ...]
) -> Iterator[list[tuple[str, Path]]]:
    """[(file name, local path)] of an uploaded job: its one file, or each file of a zip
    whose name ends with one of ``suffixes`` (in name order). SourceError when there is none,
    or when the zip is unreadable or unsafe."""
    with tempfile.TemporaryDirectory(prefix="import-upload-") as name:
        folder = Path(name)
        local = _local_copy(job, folder)
        with open(local, "rb") as handle:
            is_zip = handle.read(4) == ZIP_MAGIC
        if not is_zip:
            yield [(job.source_name, local)]
            return
        try:
            with SafeZip(local) as archive:
                members = _members(archive, suffixes)
                if not members:
                    raise SourceError(
                        _("the archive holds no %(suffixes)s file")
                        % {"suffixes": " / ".join(suffixes)}
                    )
                files = []
                for index, member in enumerate(members):
                    target = folder / f"{index}-{posixpath.basename(member)}"
                    with archive.open(member) as stream, open(target, "wb") as out:
                        while block := stream.read(1024 * 1024):
                            out.write(block)
                    files.append((posixpath.basename(member), target))
        except ArchiveError as exc:
            raise SourceError(exc.message) from exc
        yield files
