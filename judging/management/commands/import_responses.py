"""Import evaluated models' responses: ``import_responses SOURCE --dataset NAME --format …``.

SOURCE is a file, a zip, or (for the harnesses' outputs) the folder a harness wrote.
"""

from __future__ import annotations

import json
import tempfile
from argparse import ArgumentParser
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.formats.records import FormatError
from annotation.imports.sources import SourceError
from annotation.imports.uploads import open_local_files
from annotation.models import Dataset
from judging import services
from judging.formats import harness
from judging.imports.services import ANY_SUFFIXES
from judging.services.harness import DOC_ORDERS, harness_import
from judging.services.responses import AUTO, HARNESS_FORMATS


def dataset_and_file(name: str, path: str) -> tuple[Dataset, Path]:
    """The named dataset and the file to import into it; a command error when either is not."""
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        raise CommandError(f"No dataset named {name!r}.")
    source = Path(path)
    if not source.is_file():
        raise CommandError(f"No file {source}.")
    return dataset, source


@contextmanager
def source_files(source: Path) -> Iterator[list[tuple[str, str]]]:
    """(name, path) of every response file of a folder (named by their path inside it), a
    zip (likewise) or one file."""
    if source.is_dir():
        yield [
            (path.relative_to(source).as_posix(), str(path))
            for path in sorted(source.rglob("*"))
            if path.is_file() and path.name.lower().endswith(ANY_SUFFIXES)
        ]
        return
    with (
        tempfile.TemporaryDirectory(prefix="import-responses-") as folder,
        open_local_files(source, ANY_SUFFIXES, Path(folder), full_names=True) as files,
    ):
        yield [(name, str(path)) for name, path in files]


class Command(BaseCommand):
    help = (
        "Import model responses (JSON lines, a LogicVista <MODEL>-answers.json file, an "
        "lmms-eval --log_samples folder or VLMEvalKit's outputs, whose metrics become "
        "verdicts). Prints imported / unchanged / updated / rejected with reasons; exits "
        "non-zero when any row was rejected. Running it again changes nothing."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("source")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--model", default="", help="model name (default: from the file)")
        parser.add_argument("--format", choices=(AUTO, *services.RESPONSE_FORMATS), default="jsonl")
        parser.add_argument(
            "--doc-order",
            choices=DOC_ORDERS,
            default="",
            help="lmms-eval: doc_id is the position in the dataset's import order, or the "
            "sample's external id",
        )
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        fmt = options["format"]
        if fmt in HARNESS_FORMATS or fmt == AUTO:
            self._harness(options)
            return
        dataset, source = dataset_and_file(options["dataset"], options["source"])
        try:
            summary = services.response_import(
                dataset=dataset, source=source, format=options["format"], model=options["model"]
            )
        except ValidationError as exc:
            raise CommandError(f"{source.name}: {'; '.join(exc.messages)}") from exc
        write_summary(self, summary, options["json"])

    def _harness(self, options: dict[str, Any]) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"No dataset named {options['dataset']!r}.")
        source = Path(options["source"])
        if not source.exists():
            raise CommandError(f"No file or folder {source}.")
        try:
            with source_files(source) as files:
                fmt = options["format"]
                if fmt == AUTO:
                    fmt = harness.detect_format(files) or ""
                if fmt not in HARNESS_FORMATS:
                    raise CommandError(
                        f"{source.name}: not an lmms-eval or VLMEvalKit output "
                        f"(detected: {fmt or 'nothing known'}); give --format"
                    )
                summary = harness_import(
                    dataset=dataset,
                    files=files,
                    format=fmt,
                    model=options["model"],
                    doc_order=options["doc_order"],
                )
        except (FormatError, SourceError) as exc:
            raise CommandError(f"{source.name}: {exc.message}") from exc
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
