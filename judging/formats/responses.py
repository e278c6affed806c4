"""Readers for evaluated models' responses: JSON lines, and LogicVista answer files.

Response text is kept exactly as given (real outputs are messy, and a chat template or
surrounding whitespace can matter to answer extraction); only a file's BOM is removed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from annotation.formats.records import (
    FormatError,
    RowError,
    as_text,
    hostile_problem,
    json_safe,
    message,
    shown,
)
from annotation.formats.spec import Field, FormatSpec
from annotation.formats.textio import Source, iter_json_objects, read_json_document, source_name

RESPONSES_JSONL = FormatSpec(
    code="jsonl",
    title="Model responses: JSON lines",
    direction="in",
    carries="responses",
    layout="One response a line; a zip of several files is several files.",
    fields=(
        Field(
            "id",
            "The sample's external id",
            required=True,
            aliases=("question_id", "sample_id", "index"),
        ),
        Field(
            "model",
            "The evaluated model (required unless the upload names the model)",
            aliases=("model_name",),
        ),
        Field(
            "response",
            "The model's response, kept exactly (null is the empty response)",
            required=True,
            aliases=("answer", "prediction", "output"),
        ),
    ),
    example="responses/responses.jsonl",
    notes=("Other fields are kept in the response's extra.",),
)
LOGICVISTA_ANSWERS = FormatSpec(
    code="logicvista",
    title="Model responses: LogicVista answer file",
    direction="in",
    carries="responses",
    layout="<MODEL>-answers.json: an object of answers keyed by the items' ids.",
    fields=(
        Field("<key>", "The sample's external id", required=True),
        Field("answer", "The model's response, kept exactly", required=True),
        Field("reasoning", "Kept in the response's extra"),
    ),
    example="responses/GPT4-answers.json",
)

ID_FIELDS = RESPONSES_JSONL.names("id")
MODEL_FIELDS = RESPONSES_JSONL.names("model")
RESPONSE_FIELDS = RESPONSES_JSONL.names("response")
_ANSWER_FILE = re.compile(r"^(?P<model>.+)-answers\.json$", re.IGNORECASE)


@dataclass
class ParsedResponse:
    """One evaluated model's response to one sample."""

    row: int
    external_id: str
    model: str
    response: str
    extra: dict[str, Any] = field(default_factory=dict)


def model_from_filename(name: str) -> str:
    """The model name in a LogicVista answer file name "<MODEL>-answers.json", or ""."""
    match = _ANSWER_FILE.match(name)
    return match.group("model") if match else ""


def _first(record: dict[str, Any], names: tuple[str, ...]) -> tuple[str, Any] | None:
    for name in names:
        if name in record:
            return name, record[name]
    return None


def _response_text(value: Any) -> str:
    # An empty output is a real answer (it counts as a refusal), so null becomes "".
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def iter_responses_jsonl(source: Source, *, model: str = "") -> Iterator[ParsedResponse | RowError]:
    """Stream responses; each line's `model` wins over the caller's default `model`."""
    for row, record in iter_json_objects(source):
        if isinstance(record, RowError):
            yield record
            continue
        found_id = _first(record, ID_FIELDS)
        external_id = as_text(found_id[1]) if found_id else ""
        if not external_id:
            yield RowError(
                row,
                "",
                message("line {row}: the response has no id, question_id or sample_id", row=row),
            )
            continue
        found_model = _first(record, MODEL_FIELDS)
        row_model = (as_text(found_model[1]) if found_model else "") or model
        if not row_model:
            yield RowError(
                row,
                external_id,
                message("line {row}: the response names no model and none was given", row=row),
            )
            continue
        found_response = _first(record, RESPONSE_FIELDS)
        if found_response is None:
            yield RowError(
                row,
                external_id,
                message("line {row}: the line has no response, answer or prediction", row=row),
            )
            continue
        used = {found_id[0] if found_id else "", found_model[0] if found_model else ""}
        used.add(found_response[0])
        yield ParsedResponse(
            row=row,
            external_id=external_id,
            model=row_model,
            response=_response_text(found_response[1]),
            extra={k: json_safe(v) for k, v in record.items() if k not in used},
        )


def iter_logicvista_answers(
    source: Source, *, model: str = ""
) -> Iterator[ParsedResponse | RowError]:
    """Yield one response per item of a LogicVista `{id: {answer, reasoning}}` file.

    The model name is `model` if given, else taken from the file name.
    """
    model = model or model_from_filename(source_name(source))
    if not model:
        raise FormatError(
            message("the model is unknown: name the file '<MODEL>-answers.json' or give the model")
        )
    document = read_json_document(source)
    if not isinstance(document, dict):
        raise FormatError(message("the file is not a JSON object of answers keyed by id"))
    for row, (key, item) in enumerate(document.items(), start=1):
        problem = hostile_problem(key) or hostile_problem(item)
        if problem is not None:
            yield RowError(
                row,
                str(key),
                message("item {row} ('{id}'): {problem}", row=row, id=shown(key), problem=problem),
            )
            continue
        if isinstance(item, dict):
            if "answer" not in item:
                yield RowError(
                    row,
                    str(key),
                    message("item {row} ('{id}'): the item has no answer", row=row, id=key),
                )
                continue
            response = _response_text(item["answer"])
            extra = {k: json_safe(v) for k, v in item.items() if k != "answer"}
        else:
            response, extra = _response_text(item), {}
        yield ParsedResponse(
            row=row, external_id=str(key), model=model, response=response, extra=extra
        )
