"""The VLMEvalKit TSV: one row per question, images as base64, options as columns A, B, ….

Readable back by ``annotation.formats.vlmevalkit``. Several images are written as a JSON list
of base64 strings, as VLMEvalKit does for multi-image benchmarks.
"""

from __future__ import annotations

import base64
import csv
import json
import string
from collections.abc import Iterable, Sequence
from pathlib import Path

from annotation.snapshots.exports.records import ExportRecord, extra_columns

# The site's own columns beside VLMEvalKit's, read back by its reader into their fields.
EXTRA_COLUMNS = (
    "question_format",
    "explanation",
    "answerability_group",
    "pipeline",
    "source_dataset",
)
LIST_COLUMNS = ("generator_models",)


def option_columns(labels: Iterable[str]) -> list[str]:
    """The option letters to write as columns, in alphabetical order (A, B, …)."""
    wanted = {label.strip().upper() for label in labels}
    return [letter for letter in string.ascii_uppercase if letter in wanted]


def write_tsv(
    records: Iterable[ExportRecord],
    path: Path,
    *,
    option_labels: Sequence[str],
    extra_keys: Sequence[str] = (),
) -> int:
    """Write the TSV; ``option_labels`` are every option letter the exported samples use and
    ``extra_keys`` their custom fields, written as columns after the format's own (the reader
    keeps such columns in ``extra``)."""
    options = option_columns(option_labels)
    header = [
        "index",
        "image",
        "question",
        *options,
        "answer",
        "category",
        "l2-category",
        "split",
        *EXTRA_COLUMNS,
        *LIST_COLUMNS,
        "licence",
        "image_licence",
        "source_url",
    ]
    custom = extra_columns(extra_keys, header)
    header += custom
    count = 0
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream, delimiter="\t", quotechar='"', lineterminator="\n")
        writer.writerow(header)
        for record in records:
            encoded = [
                base64.b64encode(item.read()).decode("ascii") for item in record.media_of("image")
            ]
            image = encoded[0] if len(encoded) == 1 else (json.dumps(encoded) if encoded else "")
            by_label = {item["label"].upper(): item["text"] for item in record.options()}
            writer.writerow(
                [
                    record.external_id,
                    image,
                    record.text("question"),
                    *(by_label.get(letter, "") for letter in options),
                    record.text("reference_answer"),
                    record.text("category_code"),
                    record.text("scenario"),
                    record.text("split"),
                    *(record.text(name) for name in EXTRA_COLUMNS),
                    *(_json_list(record.string_list(name)) for name in LIST_COLUMNS),
                    record.licence,
                    record.licence_of("image"),
                    record.source_url,
                    *(record.extra_text(key) for key in custom),
                ]
            )
            count += 1
    return count


def _json_list(values: list[str]) -> str:
    return json.dumps(values, ensure_ascii=False) if values else ""
