"""Reader for MMOOC records (Parquet or JSON lines), as released by the benchmark.

Field aliases accepted besides the released names: `id` for `question_id`; `ic_type` or
`shift_type` for the shifted in-context type; `source` for `pipeline`; `generator` for
`generator_models`; `explanation` for `reasoning`; `options` (list or dict) or columns `A`..`F`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, Literal

from annotation.formats.records import (
    IMAGE_LICENCE_KEYS,
    LICENCE_KEYS,
    RELEASE_STATE_KEYS,
    SOURCE_KEYS,
    FormatError,
    MediaRef,
    ParsedSample,
    RowError,
    apply_licences,
    as_text,
    as_text_list,
    custom_value,
    decode_base64,
    hostile_problem,
    is_missing,
    json_safe,
    loads_json,
    looks_like_path,
    message,
    require_fields,
)
from annotation.formats.textio import Source, iter_json_objects, peek_bytes
from annotation.formats.validate import (
    OOC_GROUP,
    SHIFTED_IC_GROUP,
    extract_options,
    normalise_choice_answer,
)

OOC_CODES = {
    "missing_knowledge_background": "MKB",
    "visual_false_premises": "VFP",
    "visual_false_premise": "VFP",
    "uncertain_spatial_physical_context": "USPC",
    "unclear_logical_symbolic": "ULS",
    "multimodal_ambiguity": "MA",
}
IC_CODES = {
    "misleading_premise": "MP",
    "partial_answerability": "PA",
    "image_question_mismatch": "IQM",
}
GROUP_OF_CODE = dict.fromkeys(OOC_CODES.values(), OOC_GROUP) | dict.fromkeys(
    IC_CODES.values(), SHIFTED_IC_GROUP
)
QUESTION_FORMATS = {
    "mcq": "mcq",
    "multiple_choice": "mcq",
    "multiple-choice": "mcq",
    "choice": "mcq",
    "yesno": "yesno",
    "yes_no": "yesno",
    "yes/no": "yesno",
    "yn": "yesno",
    "vqa": "vqa",
    "open": "vqa",
    "open_ended": "vqa",
    "open-ended": "vqa",
}
PIPELINE_ALIASES = {
    "mllm_generated": "mllm_generated",
    "mllm": "mllm_generated",
    "generated": "mllm_generated",
    "human_designed": "human_designed",
    "human": "human_designed",
    "auto_shuffle": "auto_shuffle",
    "auto-shuffle": "auto_shuffle",
    "shuffle": "auto_shuffle",
}
OPTION_COLUMNS = ("A", "B", "C", "D", "E", "F")
_CONSUMED = {
    "question_id",
    "id",
    "image",
    "question",
    "answer",
    "reasoning",
    "explanation",
    "question_type",
    "ooc_type",
    "ic_type",
    "shift_type",
    "category",
    "pipeline",
    "source",
    "source_dataset",
    "generator_models",
    "generator",
    "options",
    "answerability_group",
    "split",
    *OPTION_COLUMNS,
    *LICENCE_KEYS,
    *IMAGE_LICENCE_KEYS,
    *SOURCE_KEYS,
    # The site's own layout adds the release's content hash: not data of the sample.
    *RELEASE_STATE_KEYS,
}
# The column that marks a record of this site's own MMOOC layout (snapshots' mmooc_layout).
SITE_LAYOUT_COLUMN = "content_hash"
# The fields the first record must have for the file to be MMOOC data at all.
SIGNATURE = [("question_id", "id"), ("question",)]
PARQUET_MAGIC = b"PAR1"
BATCH_ROWS = 256

Container = Literal["auto", "parquet", "jsonl"]


def category_code(value: object) -> str:
    """The short code of an OOC or shifted-IC type given by name or by code."""
    text = as_text(value)
    if text.lower() in {"", "none", "null"}:
        return ""
    key = text.lower().replace(" ", "_").replace("&", "").replace("-", "_")
    return OOC_CODES.get(key) or IC_CODES.get(key) or text.upper()


def _known_types() -> str:
    names: dict[str, str] = {}
    for name, code in (OOC_CODES | IC_CODES).items():
        names.setdefault(code, name)  # the released spelling comes first
    return ", ".join(f"{code} ({name})" for code, name in sorted(names.items()))


def _type_code(record: dict[str, Any], problems: list[str]) -> str:
    """The category code of the row's OOC or shifted-IC type; a value outside MMOOC's eight
    types is a problem of the row, whatever the dataset's taxonomy allows."""
    for column in ("ooc_type", "ic_type", "shift_type"):
        code = category_code(record.get(column))
        if not code:
            continue
        if code in GROUP_OF_CODE:
            return code
        problems.append(
            message(
                "unknown category code '{code}' in {column} (known: {known})",
                code=as_text(record.get(column)),
                column=column,
                known=_known_types(),
            )
        )
        return ""
    return ""


def _question_format(value: object, problems: list[str]) -> str:
    text = as_text(value).lower()
    if not text:
        return ""
    if text in QUESTION_FORMATS:
        return QUESTION_FORMATS[text]
    problems.append(
        message(
            "unknown question_type '{value}' (known: {known})",
            value=as_text(value),
            known=", ".join(sorted(set(QUESTION_FORMATS.values()))),
        )
    )
    return ""


def iter_mmooc(
    source: Source,
    *,
    container: Container = "auto",
    source_dataset: str = "MMOOC",
    default_group: str = "",
) -> Iterator[ParsedSample | RowError]:
    """Stream MMOOC samples from a Parquet or JSON-lines file.

    `default_group` ("ooc" or "shifted_ic") applies when a row's category does not tell,
    for example a whole `ic.parquet` file.
    """
    if container == "auto":
        container = "parquet" if peek_bytes(source, 4) == PARQUET_MAGIC else "jsonl"
    if container == "parquet":
        records: Iterator[tuple[int, dict[str, Any] | RowError]] = _iter_parquet(source)
    else:
        records = iter_json_objects(source)
    first = True
    for row, record in records:
        if isinstance(record, RowError):
            yield record
        else:
            if first:
                require_fields(record, SIGNATURE, expected=_expected())
                first = False
            yield sample_from_record(
                row, record, source_dataset=source_dataset, default_group=default_group
            )


def _expected() -> str:
    return message(
        "an MMOOC record has question_id (or id), image, question, answer, question_type "
        "and ooc_type"
    )


def _iter_parquet(source: Source) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    target: Any = os.fspath(source) if isinstance(source, str | os.PathLike) else source
    try:
        parquet = pq.ParquetFile(target)
    except (pa.ArrowInvalid, OSError) as exc:
        raise FormatError(
            message("the file is not a readable Parquet file ({detail})", detail=exc)
        ) from exc
    if parquet.metadata.num_rows == 0:
        names = set(parquet.schema_arrow.names)
        if any(all(name not in names for name in group) for group in SIGNATURE):
            raise FormatError(message("the file is empty"))
        return  # MMOOC's columns and no row (a split this site's layout left empty)
    row = 0
    # Record batches keep memory bounded by the batch, not the file.
    for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
        for record in batch.to_pylist():
            row += 1
            problem = hostile_problem(record)
            if problem is not None:
                yield (
                    row,
                    RowError(row, "", message("row {row}: {problem}", row=row, problem=problem)),
                )
                continue
            yield row, record


def sample_from_record(
    row: int, record: dict[str, Any], *, source_dataset: str = "MMOOC", default_group: str = ""
) -> ParsedSample | RowError:
    """One MMOOC record as a ParsedSample, or a RowError explaining why it cannot be."""
    external_id = as_text(record.get("question_id")) or as_text(record.get("id"))
    if not external_id:
        return RowError(
            row, "", message("line {row}: the record has no question_id or id", row=row)
        )
    problems: list[str] = []
    try:
        media = _image_media(record.get("image"))
    except ValueError:
        media = [MediaRef("image", 0, problem=message("the image is not valid base64"))]
    question = as_text(record.get("question"))
    question_format = _question_format(record.get("question_type"), problems)
    options = _options(record)
    if not options and question_format == "mcq":
        options = extract_options(question)
    answer = as_text(record.get("answer"))
    if question_format == "mcq":
        answer = normalise_choice_answer(answer)
    code = _type_code(record, problems)
    group = GROUP_OF_CODE.get(code) or as_text(record.get("answerability_group")) or default_group
    pipeline = as_text(record.get("pipeline") or record.get("source")).lower()
    if SITE_LAYOUT_COLUMN in record:
        # This site's own layout: custom fields as typed cells, "" where a sample has none.
        extra = {
            k: custom_value(v)
            for k, v in record.items()
            if k not in _CONSUMED and isinstance(v, str) and v != ""
        }
    else:
        extra = {k: json_safe(v) for k, v in record.items() if k not in _CONSUMED}
    sample = ParsedSample(
        row=row,
        external_id=external_id,
        question=question,
        question_format=question_format,
        options=options,
        reference_answer=answer,
        explanation=as_text(record.get("reasoning") or record.get("explanation")),
        answerability_group=group,
        category_code=code,
        scenario=as_text(record.get("category")),
        pipeline=PIPELINE_ALIASES.get(pipeline, pipeline),
        # This site's layout names each row's source, an empty one included.
        source_dataset=(
            as_text(record["source_dataset"])
            if SITE_LAYOUT_COLUMN in record and "source_dataset" in record
            else as_text(record.get("source_dataset")) or source_dataset
        ),
        generator_models=as_text_list(
            record.get("generator_models") or record.get("generator"), problems
        ),
        split=as_text(record.get("split")),
        media=media,
        extra=extra,
        problems=problems,
    )
    apply_licences(sample, record)
    return sample


def _image_media(value: object) -> list[MediaRef]:
    """The image cell as MediaRefs; raises ValueError for broken base64."""
    if is_missing(value):
        return []
    if isinstance(value, dict):
        # Hugging Face `Image` feature: {"bytes": ..., "path": ...}.
        data, path = value.get("bytes"), as_text(value.get("path")) or None
        if isinstance(data, bytes | bytearray) and data:
            return [MediaRef("image", 0, data=bytes(data), path=path)]
        return [MediaRef("image", 0, path=path)] if path else []
    if isinstance(value, bytes | bytearray):
        return [MediaRef("image", 0, data=bytes(value))]
    text = as_text(value)
    if looks_like_path(text):
        return [MediaRef("image", 0, path=text)]
    return [MediaRef("image", 0, data=decode_base64(text))]


def _options(record: dict[str, Any]) -> list[dict[str, str]]:
    value = record.get("options")
    if isinstance(value, str) and value.strip()[:1] in "[{":
        try:
            value = loads_json(value)
        except ValueError:
            value = None
    if isinstance(value, dict):
        return [
            {"label": as_text(label).upper(), "text": as_text(text)}
            for label, text in value.items()
            if not is_missing(text)
        ]
    if isinstance(value, list | tuple) and value:
        options = []
        for index, item in enumerate(value):
            if isinstance(item, dict):
                label = as_text(item.get("label") or item.get("key")) or chr(ord("A") + index)
                text = as_text(item.get("text") or item.get("value"))
            else:
                label, text = chr(ord("A") + index), as_text(item)
            options.append({"label": label.upper(), "text": text})
        return options
    return [
        {"label": column, "text": as_text(record[column])}
        for column in OPTION_COLUMNS
        if not is_missing(record.get(column))
    ]
