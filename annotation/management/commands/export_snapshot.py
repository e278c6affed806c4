"""Export a release snapshot from a script: the same snapshot a lead makes in the site, built
inline in this process (no worker needed), optionally copied to a local path.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from annotation.models import Dataset, JobStatus
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
        parser.add_argument("--out", help="also copy the release file to this path")
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
        out = Path(options["out"]) if options.get("out") else None
        if out is not None and not out.parent.is_dir():
            raise CommandError(_("The folder of --out does not exist: %(path)s") % {"path": out})
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
        if out is not None:
            with default_storage.open(built.file.name, "rb") as source, out.open("wb") as target:
                shutil.copyfileobj(source, target, 1024 * 1024)
        manifest = built.manifest
        summary = {
            "snapshot": built.pk,
            "file": built.file.name,
            "out": str(out) if out else None,
            "sha256": manifest["artifact"]["sha256"],
            "counts": manifest["counts"],
            "diff": manifest["diff"],
        }
        self.stdout.write(json.dumps(summary, ensure_ascii=False))
