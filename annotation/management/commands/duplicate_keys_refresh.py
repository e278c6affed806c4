"""(Re)compute the keys of near-duplicate detection for data already stored: the perceptual
hash of every image that has none (every image with --rehash), the question key of every
sample, and each dataset's possible duplicates."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from annotation.models import Dataset
from annotation.services.duplicates import duplicates_refresh


class Command(BaseCommand):
    help = (
        "Compute the perceptual hashes and question keys missing from stored data and rebuild "
        "the possible duplicates of the datasets named (every dataset by default)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dataset", action="append", dest="datasets", help="dataset name (repeatable)"
        )
        parser.add_argument(
            "--rehash", action="store_true", help="hash every image again, not only new ones"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        names: list[str] = options.get("datasets") or []
        datasets = Dataset.objects.order_by("pk")
        if names:
            datasets = datasets.filter(name__in=names)
            missing = sorted(set(names) - set(datasets.values_list("name", flat=True)))
            if missing:
                raise CommandError(_("No dataset named “%(name)s”.") % {"name": missing[0]})
        result = duplicates_refresh(
            dataset_ids=list(datasets.values_list("pk", flat=True)), rehash=options["rehash"]
        )
        self.stdout.write(
            _(
                "%(images)s images hashed, %(samples)s question keys set, "
                "%(added)s possible duplicates added, %(removed)s removed."
            )
            % {
                "images": result.images_hashed,
                "samples": result.samples_keyed,
                "added": result.pairs_added,
                "removed": result.pairs_removed,
            }
        )
