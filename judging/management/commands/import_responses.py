"""Import evaluated models' responses: ``import_responses SOURCE --dataset NAME --format …``."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Dataset
from judging import services


def dataset_and_file(name: str, path: str) -> tuple[Dataset, Path]:
    """The named dataset and the file to import into it; a command error when either is not."""
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        raise CommandError(f"No dataset named {name!r}.")
    source = Path(path)
    if not source.is_file():
        raise CommandError(f"No file {source}.")
    return dataset, source


class Command(BaseCommand):
    help = (
        "Import model responses (JSON lines, or a LogicVista <MODEL>-answers.json file). "
        "Prints imported / unchanged / updated / rejected with reasons; exits non-zero when any "
        "row was rejected. Running it again changes nothing."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("source")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--model", default="", help="model name (default: from the file)")
        parser.add_argument("--format", choices=services.RESPONSE_FORMATS, default="jsonl")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        dataset, source = dataset_and_file(options["dataset"], options["source"])
        try:
            summary = services.response_import(
                dataset=dataset, source=source, format=options["format"], model=options["model"]
            )
        except ValidationError as exc:
            raise CommandError(f"{source.name}: {'; '.join(exc.messages)}") from exc
        write_summary(self, summary, options["json"])


def write_summary(command: BaseCommand, summary: services.ImportSummary, as_json: bool) -> None:
    """Print an import summary; raise CommandError (exit 1) when rows were rejected."""
    if as_json:
        command.stdout.write(json.dumps(summary.as_dict(), ensure_ascii=False))
    else:
        command.stdout.write(
            f"imported {summary.imported}, unchanged {summary.unchanged}, "
            f"updated {summary.updated}, rejected {len(summary.rejected)}"
        )
        for note in summary.notes:
            command.stdout.write(note)
        for row in summary.rejected:
            command.stdout.write(f"  rejected: {row.message}")
    if summary.rejected:
        raise CommandError(f"{len(summary.rejected)} rows rejected.")
