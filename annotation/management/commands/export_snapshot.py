"""Export a release snapshot from a script: the same snapshot a lead makes in the site, built
inline in this process (no worker needed), optionally copied to a local file or folder.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.models import Dataset, JobStatus, Snapshot
from annotation.snapshots import services as snapshot_services


class Command(BaseCommand):
    help = (
        "Export a dataset's selected samples (verified by default) as a named, immutable "
        "snapshot with a manifest, built inline; prints the manifest's summary as JSON."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, help="dataset name")
        parser.add_argument("--name", required=True, help="snapshot name (unique per dataset)")
        parser.add_argument(
            "--format", required=True, choices=list(snapshot_services.EXPORT_FORMATS)
        )
        parser.add_argument(
            "--out",
            help=(
                "also copy the release to this file, or into this folder (an existing one, or "
                "a path ending in /) with its manifest.json beside it"
            ),
        )
        parser.add_argument(
            "--status", action="append", dest="statuses", help="status to export (repeatable)"
        )
        parser.add_argument("--group", action="append", dest="groups")
        parser.add_argument("--category", action="append", dest="categories")
        parser.add_argument("--question-format", action="append", dest="formats")
        parser.add_argument("--scenario", action="append", dest="scenarios")
        parser.add_argument("--split", action="append", dest="splits")
        parser.add_argument("--chunk-size", type=int, default=1000)

    def handle(self, *args: Any, **options: Any) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(_("No dataset named “%(name)s”.") % {"name": options["dataset"]})
        if options["chunk_size"] < 1:
            raise CommandError(_("--chunk-size must be at least 1."))
        out = _out_target(options.get("out") or "")
        keys = ("statuses", "groups", "categories", "formats", "scenarios", "splits")
        try:
            snapshot = snapshot_services.snapshot_create(
                dataset=dataset,
                name=options["name"],
                format=options["format"],
                filter={key: options[key] for key in keys if options.get(key)},
                queue=False,
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        built = snapshot_services.snapshot_build(
            snapshot_id=snapshot.pk, chunk_size=options["chunk_size"]
        )
        if built is None or built.status != JobStatus.SUCCEEDED:
            raise CommandError(built.message if built else _("The snapshot disappeared."))
        written = _copy_out(built, out) if out is not None else None
        manifest = built.manifest
        summary: dict[str, Any] = {
            "snapshot": built.pk,
            "file": built.file.name,
            "out": str(written) if written else None,
            "sha256": manifest["artifact"]["sha256"],
            "counts": manifest["counts"],
            "diff": manifest["diff"],
        }
        if out is not None and out.folder:
            summary["manifest"] = str(out.path / "manifest.json")
        left_out = built.left_out
        if left_out:
            summary["left_out"] = left_out
            self.stderr.write(
                ngettext(
                    "Warning: %(n)d sample was left out: it is in neither the OOC nor the "
                    "shifted in-context group, which are the only files of the MMOOC layout.",
                    "Warning: %(n)d samples were left out: they are in neither the OOC nor the "
                    "shifted in-context group, which are the only files of the MMOOC layout.",
                    left_out,
                )
                % {"n": left_out}
            )
        self.stdout.write(json.dumps(summary, ensure_ascii=False))


@dataclass(frozen=True)
class OutTarget:
    path: Path
    folder: bool


def _out_target(value: str) -> OutTarget | None:
    """Where --out points: a folder (an existing one, or a new one named with a trailing
    separator, whose parent exists) or a file in an existing folder."""
    if not value:
        return None
    path = Path(value)
    folder = path.is_dir() or value.endswith(("/", os.sep))
    parent = path.parent
    if not parent.is_dir():
        raise CommandError(_("The folder of --out does not exist: %(path)s") % {"path": parent})
    return OutTarget(path=path, folder=folder)


def _copy_out(snapshot: Snapshot, out: OutTarget) -> Path:
    """Copy the stored release (and, into a folder, its manifest) to --out; the release's path."""
    names = snapshot.file_names
    if not out.folder:
        _copy(names["release"], out.path)
        return out.path
    out.path.mkdir(exist_ok=True)
    target = out.path / names["release"].rsplit("/", 1)[-1]
    _copy(names["release"], target)
    _copy(names["manifest"], out.path / "manifest.json")
    return target


def _copy(name: str, target: Path) -> None:
    with default_storage.open(name, "rb") as source, target.open("wb") as handle:
        shutil.copyfileobj(source, handle, 1024 * 1024)
