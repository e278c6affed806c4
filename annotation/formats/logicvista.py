"""Reader for the LogicVista dataset file: `{id: {imagename, question, answer, reasoning,
skill[], broad_capability[], specific_capability[], imagesource, sourcelink, liscenced}}`.

The file is a single JSON object of modest size, so it is loaded whole.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from annotation.formats.records import (
    FormatError,
    MediaRef,
    NotThisFormat,
    ParsedSample,
    RowError,
    as_text,
    as_text_list,
    hostile_problem,
    json_safe,
    message,
    require_fields,
    shown,
)
from annotation.formats.textio import Source, read_json_document
from annotation.formats.validate import extract_options, normalise_choice_answer

_CONSUMED = {"imagename", "question", "answer", "reasoning", "skill", "sourcelink"}


def iter_logicvista(
    source: Source,
    *,
    image_dir: str = "images",
    source_dataset: str = "LogicVista",
    licence: str = "",
) -> Iterator[ParsedSample | RowError]:
    """Yield one multiple-choice sample per item; images are paths under `image_dir`.

    Options are read from the question text when it lists them; many spatial items draw
    their options in the image, so their `options` stay empty.
    """
    document = read_json_document(source)
    if not isinstance(document, dict):
        raise NotThisFormat(message("the file is not a JSON object of items keyed by id"))
    if not document:
        raise FormatError(message("the file is empty"))
    first = next(iter(document.values()))
    if isinstance(first, dict):
        expected = message("a LogicVista item has imagename, question, answer, reasoning and skill")
        require_fields(first, [("question", "imagename")], expected=expected)
    for row, (key, item) in enumerate(document.items(), start=1):
        external_id = str(key).strip()
        problem = hostile_problem(key) or hostile_problem(item)
        if problem is None and not isinstance(item, dict):
            problem = message("the item is not a JSON object")
        if problem is not None:
            yield RowError(
                row,
                external_id,
                message("item {row} ('{id}'): {problem}", row=row, id=shown(key), problem=problem),
            )
            continue
        question = as_text(item.get("question"))
        skills = as_text_list(item.get("skill"))
        image_name = as_text(item.get("imagename"))
        media = (
            [MediaRef("image", 0, path=posixpath.join(image_dir, image_name))] if image_name else []
        )
        yield ParsedSample(
            row=row,
            external_id=external_id,
            question=question,
            question_format="mcq",
            options=extract_options(question),
            reference_answer=normalise_choice_answer(as_text(item.get("answer"))),
            explanation=as_text(item.get("reasoning")),
            category_code=skills[0] if skills else "",
            source_dataset=source_dataset,
            source_url=as_text(item.get("sourcelink")),
            licence=licence,
            media=media,
            extra={"skills": skills}
            | {k: json_safe(v) for k, v in item.items() if k not in _CONSUMED},
        )
