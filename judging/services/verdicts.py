"""Verdicts made elsewhere, imported from JSON lines."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from annotation import selectors as annotation_selectors
from annotation.formats.records import FormatError, RowError
from annotation.formats.textio import Source, iter_json_objects
from annotation.models import Dataset
from core.limits import json_size
from judging.audit import computations
from judging.calls.output import (
    AnswerabilityOutput,
    MalformedOutput,
    SafetyOutput,
    ScoringOutput,
    parse_judge_output,
)
from judging.formats.verdicts import VERDICTS_JSONL
from judging.models import Judge, JudgeTask, ModelResponse, Verdict, VerdictSource
from judging.services.jobs import job_task_for
from judging.services.judges import judge_get_or_create_external
from judging.services.responses import ImportSummary

DEFAULT_PROMPT_VERSION = "external"
# The names of a line's fields, as the format reference lists them (judging.formats.verdicts).
_ID = VERDICTS_JSONL.names("sample_id")
_MODEL = VERDICTS_JSONL.names("model")
_LABEL = VERDICTS_JSONL.names("label")
_REASON = VERDICTS_JSONL.names("rationale")
_COMPARED = ("label", "category", "answer_score", "reasoning_score", "rationale")


def _verdict_payload(task: str, record: dict[str, Any]) -> dict[str, Any]:
    """The line as the judge output it stands for, checked by the same rules as live output."""
    reason = record.get(_REASON[0], record.get(_REASON[1], ""))
    if task == JudgeTask.ANSWERABILITY:
        data: dict[str, Any] = {
            "answerable": record.get(_LABEL[0], record.get(_LABEL[1])),
            "category": record.get("category"),
            "reason": reason,
        }
    elif task == JudgeTask.MMOOC_SCORING:
        data = {
            "answer_score": record.get("answer_score"),
            "reasoning_score": record.get("reasoning_score"),
            "reason": reason,
        }
    else:
        data = {"label": record.get("label"), "reason": reason}
    parsed = parse_judge_output(json.dumps(data), task)
    if isinstance(parsed, ScoringOutput):
        return {
            "answer_score": parsed.answer_score,
            "reasoning_score": parsed.reasoning_score,
            "rationale": parsed.reason,
        }
    if isinstance(parsed, AnswerabilityOutput):
        return {
            "label": "answerable" if parsed.answerable else "unanswerable",
            "category": parsed.category or "",
            "rationale": parsed.reason,
        }
    assert isinstance(parsed, SafetyOutput)
    return {"label": parsed.label, "rationale": parsed.reason}


def _text(record: dict[str, Any], *names: str) -> str:
    for name in names:
        value = record.get(name)
        if value is not None and str(value).strip():
            return str(value).strip()
    return ""


def verdict_import(*, dataset: Dataset, source: Source) -> ImportSummary:
    """Import verdicts (JSONL: sample id, judge, task, label or scores, rationale [, model]).

    Idempotent: the same line again is unchanged; a different label for the same (judge,
    item, task, prompt version, repeat) updates it. Unknown judges are created as external
    judges. Bad lines are rejected with their line number and reason.
    """
    summary = ImportSummary()
    judges: dict[str, Judge] = {}
    try:
        for row, record in iter_json_objects(source):
            verdict_import_record(
                dataset=dataset, row=row, record=record, judges=judges, summary=summary
            )
    except FormatError as exc:
        raise ValidationError(exc.message) from exc
    finally:
        computations.dataset_figures_request(dataset_id=dataset.pk)
    return summary


def verdict_import_record(
    *,
    dataset: Dataset,
    row: int,
    record: dict[str, Any] | RowError,
    judges: dict[str, Judge],
    summary: ImportSummary,
) -> None:
    """Import one line (in its own transaction, or savepoint), counting it in ``summary``:
    imported, unchanged, updated, or rejected with its line and reason. ``judges`` caches
    the judges by name across lines."""
    if isinstance(record, RowError):
        summary.rejected.append(record)
        return
    try:
        outcome = _import_line(dataset, row, record, judges, summary)
    except (ValidationError, MalformedOutput) as exc:
        reason = exc.message if isinstance(exc, MalformedOutput) else "; ".join(exc.messages)
        summary.rejected.append(
            RowError(
                row,
                _text(record, *_ID),
                _("line %(row)s: %(reason)s") % {"row": row, "reason": reason},
            )
        )
        return
    setattr(summary, outcome, getattr(summary, outcome) + 1)


@transaction.atomic
def _import_line(
    dataset: Dataset,
    row: int,
    record: dict[str, Any],
    judges: dict[str, Judge],
    summary: ImportSummary,
) -> str:
    external_id = _text(record, *_ID)
    judge_name = _text(record, "judge")
    if json_size(record) > settings.JUDGING_ROW_MAX_CHARS:
        raise ValidationError(
            _("the line is longer than %(limit)s characters")
            % {"limit": settings.JUDGING_ROW_MAX_CHARS}
        )
    if not external_id or not judge_name:
        raise ValidationError(_("the line needs a sample_id and a judge"))
    task = job_task_for(dataset, _text(record, "task") or "answerability")
    sample_id = annotation_selectors.sample_ids_by_external_id(
        dataset=dataset, external_ids=[external_id]
    ).get(external_id)
    if sample_id is None:
        raise ValidationError(
            _("no sample “%(id)s” in dataset %(dataset)s")
            % {"id": external_id, "dataset": dataset.name}
        )
    response = None
    if task != JudgeTask.ANSWERABILITY:
        model = _text(record, *_MODEL)
        response = ModelResponse.objects.filter(sample_id=sample_id, model_name=model).first()
        if response is None:
            raise ValidationError(
                _("no response of model “%(model)s” to sample “%(id)s”; import it first")
                % {"model": model, "id": external_id}
            )
    try:
        repeat = int(record.get("repeat", 0))
    except (TypeError, ValueError):
        repeat = -1
    if repeat < 0:
        raise ValidationError(_("repeat must be a whole number from 0"))
    values = _verdict_payload(task, record)
    if judge_name not in judges:
        judges[judge_name], created = judge_get_or_create_external(name=judge_name)
        if created:
            summary.notes.append(_("created external judge %(name)s") % {"name": judge_name})
    key = {
        "judge": judges[judge_name],
        "task": task,
        "prompt_version": _text(record, "prompt_version") or DEFAULT_PROMPT_VERSION,
        "repeat": repeat,
        "sample_id": sample_id,
        "response": response,
    }
    existing = Verdict.objects.filter(**key).first()
    if existing is None:
        Verdict.objects.create(**key, **values, source=VerdictSource.IMPORT, raw=record)
        return "imported"
    current = {name: getattr(existing, name) for name in _COMPARED}
    if all(current[name] == values.get(name, current[name]) for name in _COMPARED) and not (
        existing.error_kind
    ):
        return "unchanged"
    for name, value in values.items():
        setattr(existing, name, value)
    existing.error_kind, existing.error, existing.raw = "", "", record
    existing.source = VerdictSource.IMPORT
    existing.save()
    return "updated"
