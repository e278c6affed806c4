"""Import verdicts made elsewhere: ``import_verdicts FILE --dataset NAME``."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from judging import services
from judging.management.commands.import_responses import dataset_and_file, write_summary


class Command(BaseCommand):
    help = (
        "Import verdicts from JSON lines: sample_id, judge, task (answerability | scoring | "
        "mmooc_scoring | mcbench_safety), label or answer_score + reasoning_score, rationale, "
        "and model for scoring. Exits non-zero when any line was rejected."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        dataset, source = dataset_and_file(options["dataset"], options["file"])
        try:
            summary = services.verdict_import(dataset=dataset, source=source)
        except ValidationError as exc:
            raise CommandError(f"{source.name}: {'; '.join(exc.messages)}") from exc
        write_summary(self, summary, options["json"])
