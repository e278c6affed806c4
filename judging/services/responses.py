"""Evaluated models' responses: imported from JSON lines or LogicVista answer files (the
harnesses' outputs, which bring verdicts too, in ``judging.services.harness``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import selectors as annotation_selectors
from annotation.formats.records import FormatError, RowError
from annotation.formats.textio import Source
from annotation.models import Dataset
from core.bulk import rows_insert
from core.limits import json_size
from judging.audit import computations
from judging.formats.responses import ParsedResponse, iter_logicvista_answers, iter_responses_jsonl
from judging.models import ModelResponse, Verdict

# "auto": detected from the upload's shape (judging.formats.harness.detect_format).
AUTO = "auto"
HARNESS_FORMATS = ("lmms_eval", "vlmevalkit")
RESPONSE_FORMATS = ("jsonl", "logicvista", *HARNESS_FORMATS)
RESPONSE_FORMAT_CHOICES = [AUTO, *RESPONSE_FORMATS]
BATCH = 1000


@dataclass
class ImportSummary:
    """What an import did, row by row; `rejected` rows carry their line and reason."""

    imported: int = 0
    unchanged: int = 0
    updated: int = 0
    rejected: list[RowError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "unchanged": self.unchanged,
            "updated": self.updated,
            "rejected": len(self.rejected),
            "rejections": [
                {"row": r.row, "id": r.external_id, "reason": r.message} for r in self.rejected
            ],
            "notes": self.notes,
        }


def _batches(
    rows: Iterable[ParsedResponse | RowError],
) -> Iterator[list[ParsedResponse | RowError]]:
    iterator = iter(rows)
    while batch := list(islice(iterator, BATCH)):
        yield batch


def response_reader(source: Source, fmt: str, model: str) -> Iterator[ParsedResponse | RowError]:
    """The reader of a file of one model's responses in a row-per-response format."""
    if fmt == "jsonl":
        return iter_responses_jsonl(source, model=model)
    if fmt == "logicvista":
        return iter_logicvista_answers(source, model=model)
    raise ValidationError(
        _("Unknown response format “%(format)s” (known: %(known)s).")
        % {"format": fmt, "known": ", ".join(RESPONSE_FORMATS)}
    )


def response_import(
    *, dataset: Dataset, source: Source, format: str, model: str = ""
) -> ImportSummary:
    """Import responses; idempotent (a second run reports every row unchanged).

    A row whose sample id is unknown in the dataset, or that repeats an earlier row's sample
    and model, is rejected with its line and reason; the other rows are still imported. Raises
    ValidationError when the file as a whole cannot be read.
    """
    summary = ImportSummary()
    seen: set[tuple[str, str]] = set()
    try:
        for batch in _batches(response_reader(source, format, model)):
            response_import_batch(dataset, batch, summary, seen)
    except FormatError as exc:
        raise ValidationError(exc.message) from exc
    finally:
        # Rows of the batches already committed count, whether or not the file ended well.
        computations.dataset_figures_request(dataset_id=dataset.pk)
    return summary


@transaction.atomic
def response_import_batch(
    dataset: Dataset,
    batch: list[ParsedResponse | RowError],
    summary: ImportSummary,
    seen: set[tuple[str, str]],
) -> None:
    """Store one batch of rows, counting them in ``summary``; ``seen`` holds the (sample id,
    model) pairs of earlier rows, whose repeats are rejected."""
    parsed = [row for row in batch if isinstance(row, ParsedResponse)]
    summary.rejected += [row for row in batch if isinstance(row, RowError)]
    sample_ids = annotation_selectors.sample_ids_by_external_id(
        dataset=dataset, external_ids=(row.external_id for row in parsed)
    )
    existing = {
        (r.sample_id, r.model_name): r
        for r in ModelResponse.objects.filter(
            sample_id__in=sample_ids.values(), model_name__in={row.model for row in parsed}
        )
    }
    new: list[dict[str, object]] = []
    changed: list[ModelResponse] = []
    limit = settings.JUDGING_ROW_MAX_CHARS
    for row in parsed:
        if len(row.response) > limit or (row.extra and json_size(row.extra) > limit):
            summary.rejected.append(
                RowError(
                    row.row,
                    row.external_id,
                    _("line %(row)s: the response or its row is longer than %(limit)s characters")
                    % {"row": row.row, "limit": limit},
                )
            )
            continue
        sample_id = sample_ids.get(row.external_id)
        if sample_id is None:
            summary.rejected.append(
                RowError(
                    row.row,
                    row.external_id,
                    _("line %(row)s: no sample “%(id)s” in dataset %(dataset)s")
                    % {"row": row.row, "id": row.external_id, "dataset": dataset.name},
                )
            )
            continue
        if (row.external_id, row.model) in seen:
            summary.rejected.append(
                RowError(
                    row.row,
                    row.external_id,
                    _("line %(row)s: a second response of %(model)s to sample “%(id)s”")
                    % {"row": row.row, "model": row.model, "id": row.external_id},
                )
            )
            continue
        seen.add((row.external_id, row.model))
        current = existing.get((sample_id, row.model))
        if current is None:
            new.append(
                {
                    "dataset_id": dataset.pk,
                    "sample_id": sample_id,
                    "model_name": row.model,
                    "response": row.response,
                    "extra": row.extra,
                }
            )
        elif current.response == row.response and current.extra == row.extra:
            summary.unchanged += 1
        else:
            current.response, current.extra = row.response, row.extra
            current.updated_at = timezone.now()
            changed.append(current)
    # COPY on PostgreSQL (core.bulk): bulk_create's client-side quoting of wide rows cost
    # more than the database's own work.
    rows_insert(ModelResponse, new)
    ModelResponse.objects.bulk_update(changed, ["response", "extra", "updated_at"], batch_size=500)
    # Verdicts on a response's old text no longer hold.
    Verdict.objects.filter(response__in=[r.pk for r in changed]).delete()
    summary.imported += len(new)
    summary.updated += len(changed)
