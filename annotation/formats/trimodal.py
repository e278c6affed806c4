"""Reader for tri-modal safety scenarios (MCBench) as JSON lines.

Accepted field names (first found wins):

| field | aliases |
|---|---|
| id | `id`, `scenario_id`, `sample_id`, `uid` |
| image | `image`, `image_path`, `image_file`, `img` |
| audio | `audio`, `audio_path`, `audio_file`, `wav` |
| image description | `image_description`, `T_I`, `t_i`, `image_desc`, `image_caption` |
| audio description | `audio_description`, `T_A`, `t_a`, `audio_desc`, `audio_caption` |
| speech utterance | `speech`, `speech_utterance`, `utterance`, `S`, `speech_text` |
| label | `label`, `R`, `safety_label`, `safety` |
| category | `category`, `safety_category` |
| subcategory | `subcategory`, `sub_category`, `safety_subcategory` |
| predicate | `predicate`, `L`, `logic`, `logic_predicate`, `conditions` |
| pair | `pair_id`, `pair`, `paired_id`, `pair_external_id` |
| provenance | `source_url`, `url`; `licence`, `license`; `split` |
| one medium's licence | `image_licence`, `audio_licence` (over `licence` for that file) |
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from annotation.formats import records
from annotation.formats.records import (
    MediaRef,
    MediaRole,
    ParsedSample,
    RowError,
    as_text,
    is_missing,
    message,
)
from annotation.formats.textio import Source, iter_json_records

ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "scenario_id", "sample_id", "uid"),
    "image": ("image", "image_path", "image_file", "img"),
    "audio": ("audio", "audio_path", "audio_file", "wav"),
    "image_description": ("image_description", "T_I", "t_i", "image_desc", "image_caption"),
    "audio_description": ("audio_description", "T_A", "t_a", "audio_desc", "audio_caption"),
    "speech": ("speech", "speech_utterance", "utterance", "S", "speech_text"),
    "label": ("label", "R", "safety_label", "safety"),
    "category": ("category", "safety_category"),
    "subcategory": ("subcategory", "sub_category", "safety_subcategory"),
    "predicate": ("predicate", "L", "logic", "logic_predicate", "conditions"),
    "pair_id": ("pair_id", "pair", "paired_id", "pair_external_id"),
    "source_url": ("source_url", "url"),
    "licence": ("licence", "license"),
    "image_licence": ("image_licence", "image_license"),
    "audio_licence": ("audio_licence", "audio_license"),
    "split": ("split",),
}
_PREDICATE = re.compile(r"^\s*IF\s+(?P<body>.*?)\s+THEN\s+(?P<outcome>\S+)\s*\.?\s*$", re.I | re.S)
_AND = re.compile(r"\s+AND\s+", re.IGNORECASE)


def split_predicate(value: object) -> list[str]:
    """The conditions of a logic predicate: a list as is, or "IF a AND b THEN UNSAFE" split."""
    if isinstance(value, list | tuple):
        return [as_text(item) for item in value if not is_missing(item)]
    text = as_text(value)
    if not text:
        return []
    match = _PREDICATE.match(text)
    body = match.group("body") if match else text
    return [part.strip() for part in _AND.split(body) if part.strip()]


def _pick(record: dict[str, Any], field: str) -> Any:
    for name in ALIASES[field]:
        if name in record and not is_missing(record[name]):
            return record[name]
    return None


def _media(role: MediaRole, value: object) -> MediaRef | None:
    if is_missing(value):
        return None
    if isinstance(value, dict):
        path = as_text(value.get("path")) or None
        return MediaRef(role, 0, path=path) if path else None
    text = as_text(value)
    if records.looks_like_path(text):
        return MediaRef(role, 0, path=text)
    return MediaRef(role, 0, data=records.decode_base64(text))


def iter_trimodal(
    source: Source, *, source_dataset: str = "MCBench"
) -> Iterator[ParsedSample | RowError]:
    """Stream tri-modal scenarios (image, audio, speech, safe/unsafe label) from JSON lines."""
    consumed = {name for names in ALIASES.values() for name in names} | {"generator_models"}
    signature = [ALIASES["id"], ALIASES["speech"] + ALIASES["label"]]
    expected = message(
        "a tri-modal scenario has an id, image, audio, a speech utterance (S), "
        "a safe/unsafe label (R), a category and a logic predicate (L)"
    )
    for row, record in iter_json_records(source, signature, expected=expected):
        if isinstance(record, RowError):
            yield record
            continue
        external_id = as_text(_pick(record, "id"))
        if not external_id:
            yield RowError(row, "", message("line {row}: the record has no id", row=row))
            continue
        media: list[MediaRef] = []
        for role in ("image", "audio"):
            try:
                ref = _media(role, _pick(record, role))
            except ValueError:
                ref = MediaRef(
                    role,
                    0,
                    problem=message(
                        "the {role} is neither a file path nor valid base64", role=role
                    ),
                )
            if ref is not None:
                media.append(ref)
        predicate_value = _pick(record, "predicate")
        extra = {k: records.json_safe(v) for k, v in record.items() if k not in consumed}
        if isinstance(predicate_value, str):
            extra["predicate_text"] = predicate_value
        sample = ParsedSample(
            row=row,
            external_id=external_id,
            image_description=as_text(_pick(record, "image_description")),
            audio_description=as_text(_pick(record, "audio_description")),
            speech_utterance=as_text(_pick(record, "speech")),
            safety_label=as_text(_pick(record, "label")).lower(),
            safety_category=as_text(_pick(record, "category")),
            safety_subcategory=as_text(_pick(record, "subcategory")),
            predicate=split_predicate(predicate_value),
            pair_external_id=as_text(_pick(record, "pair_id")),
            source_url=as_text(_pick(record, "source_url")),
            split=as_text(_pick(record, "split")),
            source_dataset=source_dataset,
            generator_models=records.as_text_list(record.get("generator_models")),
            media=media,
            extra=extra,
        )
        records.apply_licences(sample, record)
        yield sample
