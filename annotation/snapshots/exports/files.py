"""Files of an export folder: media stored once per content, sha256 of what was written."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from annotation.snapshots.exports.records import ExportMedia

_CHUNK = 1024 * 1024


def store_media(out_dir: Path, media: ExportMedia) -> str:
    """Write a media file under ``out_dir`` unless that content is already there; its path."""
    relative = media.archive_path
    target = out_dir / relative
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(media.read())
    return relative


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in chunks so memory stays flat for big archives."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def tree_files(root: Path) -> list[str]:
    """Every file under a folder as sorted POSIX paths relative to it."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


_COMPRESSIBLE = (".jsonl", ".json", ".md", ".tsv", ".txt", ".csv", ".wav")


def zip_folder(root: Path, names: list[str], target: Path) -> None:
    """Pack the named files of a folder into a zip, streamed from disk one file at a time.

    Text is deflated; Parquet, images and other compressed data are stored as they are.
    """
    with zipfile.ZipFile(target, "w", allowZip64=True) as archive:
        for name in names:
            method = zipfile.ZIP_DEFLATED if name.endswith(_COMPRESSIBLE) else zipfile.ZIP_STORED
            archive.write(root / name, arcname=name, compress_type=method)
