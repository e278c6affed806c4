"""``manage.py agreement RATINGS.csv``: print the agreement report as one JSON object."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.stats.ratings import LEVELS
from judging.stats.report import agreement_report


class Command(BaseCommand):
    help = (
        "Inter-rater agreement (percent agreement, Krippendorff's alpha, Fleiss' kappa, "
        "Gwet's AC1, pairwise Cohen's kappa) with item-bootstrap 95% intervals for a "
        "long-format CSV with header item,rater,label."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("ratings", help="CSV file with header item,rater,label")
        parser.add_argument("--level", choices=LEVELS, default="nominal")
        parser.add_argument("--bootstrap", type=int, default=1000, help="replicates (0: none)")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = agreement_report(
                options["ratings"],
                level=options["level"],
                n_bootstrap=options["bootstrap"],
                seed=options["seed"],
            )
        except (OSError, ValueError) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(json.dumps(report, allow_nan=False))
