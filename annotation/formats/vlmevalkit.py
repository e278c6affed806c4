"""Reader for VLMEvalKit-style TSV files (MMT-Bench and most multiple-choice benchmarks).

Columns: `index`, `image` (base64; a short value is the index of a row whose image is
reused; a JSON or Python list for several images), optional `image_path`, `question`,
optional `hint`, option columns `A`, `B`, `C`, …, `answer`, `category`, `l2-category`, `split`.
The site's own export adds `question_format` (multiple choice when absent), `explanation`,
`answerability_group`, `pipeline`, `source_dataset` and `generator_models` (a JSON list); its
further columns are custom fields as typed cells, read back with their types.
"""

from __future__ import annotations

import ast
import csv
import string
import sys
from collections.abc import Iterator
from typing import Any

from annotation.formats import records
from annotation.formats.records import (
    MediaRef,
    NotThisFormat,
    ParsedSample,
    RowError,
    as_text,
    message,
)
from annotation.formats.textio import Source, not_utf8_error, open_text
from annotation.formats.validate import normalise_choice_answer

# An image cell this short cannot be an image: it is the index of the row to reuse.
REUSE_MAX_CHARS = 64
REQUIRED_COLUMNS = ("index", "question")
_CONSUMED = {"index", "image", "image_path", "question", "answer", "category", "l2-category"}
_CONSUMED |= {"split", *string.ascii_uppercase}
# Columns this site's own TSV export adds beside VLMEvalKit's, read back into their fields.
_CONSUMED |= {"explanation", "reasoning", "answerability_group", "source_dataset"}
_CONSUMED |= {"question_format", "pipeline", "generator_models"}
_CONSUMED |= {*records.LICENCE_KEYS, *records.IMAGE_LICENCE_KEYS, *records.SOURCE_KEYS}
# The columns that mark a file as this site's own TSV, whose other columns are custom fields
# written as typed cells (numbers, lists and objects as JSON: see records.custom_cell).
SITE_COLUMNS = frozenset({"question_format", "answerability_group", "source_dataset"})


def _raise_field_limit() -> None:
    """Allow the huge base64 cells of real TSVs (the csv default is 128 KiB)."""
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:  # C long is 32 bits on some platforms
            limit //= 2


def _parse_list(text: str) -> list[str] | None:
    """A cell holding a JSON or Python list of strings, or None if it is not one."""
    if not text.startswith("["):
        return None
    try:
        value = records.loads_json(text)
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            return None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def iter_vlmevalkit(
    source: Source, *, source_dataset: str = "MMT-Bench"
) -> Iterator[ParsedSample | RowError]:
    """Stream multiple-choice samples from a VLMEvalKit TSV file."""
    _raise_field_limit()
    with open_text(source) as handle:
        reader = csv.reader(handle, delimiter="\t", quotechar='"')
        try:
            yield from _iter_rows(reader, source_dataset)
        except UnicodeDecodeError as exc:
            raise not_utf8_error(reader.line_num + 1) from exc
        except csv.Error as exc:
            raise records.FormatError(
                message(
                    "line {row}: the file is not a well-formed TSV ({detail})",
                    row=reader.line_num,
                    detail=exc,
                )
            ) from exc


def _iter_rows(reader: Any, source_dataset: str) -> Iterator[ParsedSample | RowError]:
    header = next(reader, None)
    if header is None:
        raise records.FormatError(message("the file is empty"))
    header = [name.strip().lstrip("\ufeff") for name in header]
    expected = message(
        "a VLMEvalKit TSV has the columns index, image, question, A, B, …, answer, category"
    )
    for column in REQUIRED_COLUMNS:
        if column not in header:
            raise NotThisFormat(
                message("the file has no '{column}' column", column=column) + "; " + expected
            )
    if "image" not in header and "image_path" not in header:
        raise NotThisFormat(
            message("the file has neither an 'image' nor an 'image_path' column") + "; " + expected
        )
    option_columns = [name for name in header if len(name) == 1 and name in string.ascii_uppercase]
    # This site's own TSV types its custom-field cells (records.custom_cell).
    typed = set(header) >= SITE_COLUMNS
    # index -> index of the row that holds the image bytes, for reuse by later rows.
    image_owner: dict[str, str] = {}
    line = reader.line_num
    for cells in reader:
        row = line + 1
        line = reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            yield RowError(
                row,
                cells[0] if cells else "",
                message(
                    "line {row}: the row has {found} cells but the header has {expected}",
                    row=row,
                    found=len(cells),
                    expected=len(header),
                ),
            )
            continue
        record = dict(zip(header, cells, strict=True))
        problem = records.hostile_problem(record)
        if problem is not None:
            yield RowError(
                row, cells[0], message("line {row}: {problem}", row=row, problem=problem)
            )
            continue
        yield _sample(row, record, option_columns, image_owner, source_dataset, typed=typed)


def _sample(
    row: int,
    record: dict[str, str],
    option_columns: list[str],
    image_owner: dict[str, str],
    source_dataset: str,
    *,
    typed: bool = False,
) -> ParsedSample | RowError:
    external_id = as_text(record["index"])
    if not external_id:
        return RowError(row, "", message("line {row}: the row has no index", row=row))
    media = _media(external_id, record, image_owner)
    problems: list[str] = []
    options = [
        {"label": column, "text": record[column].strip()}
        for column in option_columns
        if not records.is_missing(record[column])
    ]
    extra = {
        k: records.custom_value(v) if typed else v
        for k, v in record.items()
        if k not in _CONSUMED and not records.is_missing(v)
    }
    # VLMEvalKit's own files are multiple choice; the site's export names each row's format.
    question_format = as_text(record.get("question_format")) or "mcq"
    answer = as_text(record.get("answer"))
    sample = ParsedSample(
        row=row,
        external_id=external_id,
        question=record["question"].strip(),
        question_format=question_format,
        options=options,
        reference_answer=normalise_choice_answer(answer) if question_format == "mcq" else answer,
        explanation=as_text(record.get("explanation")) or as_text(record.get("reasoning")),
        answerability_group=as_text(record.get("answerability_group")),
        category_code=as_text(record.get("category")),
        scenario=as_text(record.get("l2-category")),
        # The site's export names each row's source, an empty one included.
        source_dataset=(
            as_text(record["source_dataset"]) if "source_dataset" in record else source_dataset
        ),
        split=as_text(record.get("split")),
        pipeline=as_text(record.get("pipeline")),
        generator_models=records.as_text_list(record.get("generator_models"), problems),
        media=media,
        extra=extra,
        problems=problems,
    )
    records.apply_licences(sample, record)
    return sample


def _media(external_id: str, record: dict[str, str], image_owner: dict[str, str]) -> list[MediaRef]:
    image = as_text(record.get("image"))
    path_cell = as_text(record.get("image_path"))
    paths = _parse_list(path_cell) or ([path_cell] if path_cell else [])
    if not image:
        return [MediaRef("image", i, path=path) for i, path in enumerate(paths)]
    if len(image) <= REUSE_MAX_CHARS and _parse_list(image) is None:
        owner = image_owner.get(image)
        if owner is None:
            problem = message(
                "the image refers to the row with index '{ref}', "
                "which has no image earlier in the file",
                ref=image,
            )
            return [MediaRef("image", 0, problem=problem)]
        image_owner[external_id] = owner
        return [MediaRef("image", 0, same_as=owner)]
    encoded = _parse_list(image) or [image]
    media = []
    for position, text in enumerate(encoded):
        try:
            data = records.decode_base64(text)
        except ValueError:
            problem = (
                message("image {number} is not valid base64", number=position + 1)
                if len(encoded) > 1
                else message("the image is not valid base64")
            )
            return [MediaRef("image", 0, problem=problem)]
        path = paths[position] if position < len(paths) else None
        media.append(MediaRef("image", position, data=data, path=path))
    image_owner[external_id] = external_id
    return media
