"""The records every format reader produces, and the helpers they share to build them."""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from core.limits import MAX_JSON_DEPTH, find_hostile

MediaRole = Literal["image", "audio"]

# The fields whose every change is kept in a sample's history.
LABEL_FIELDS: tuple[str, ...] = (
    "question",
    "question_format",
    "options",
    "reference_answer",
    "explanation",
    "answerability_group",
    "category_code",
    "scenario",
    "split",
    "pipeline",
    "source_dataset",
    "generator_models",
    "image_description",
    "audio_description",
    "speech_utterance",
    "safety_label",
    "safety_category",
    "safety_subcategory",
    "predicate",
)


class FormatError(Exception):
    """A problem with the whole file (encoding, missing column, not the expected format)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotThisFormat(FormatError):
    """The whole file is of another kind than the format read it as (one message, not one per
    row): a pretty-printed JSON document read as JSON lines, another benchmark's records."""


@dataclass
class MediaRef:
    """One image or audio file attached to a sample, as bytes, a path or a reused row."""

    role: MediaRole
    position: int
    data: bytes | None = None
    # Relative path inside the source folder or zip, or an absolute server path.
    path: str | None = None
    # VLMEvalKit reuses images: the external id of an earlier row whose image this is.
    same_as: str | None = None
    # Why the entry cannot be read (broken base64, a reuse of an unknown row); the row is
    # rejected with this reason among its other problems.
    problem: str | None = None
    # This file's own licence; empty: the sample's (``ParsedSample.licence``) applies.
    licence: str = ""


@dataclass
class ParsedSample:
    """One candidate sample, normalised from any supported benchmark format."""

    row: int
    external_id: str
    question: str = ""
    question_format: str = ""
    options: list[dict[str, str]] = field(default_factory=list)
    reference_answer: str = ""
    explanation: str = ""
    answerability_group: str = ""
    category_code: str = ""
    scenario: str = ""
    pipeline: str = ""
    source_dataset: str = ""
    generator_models: list[str] = field(default_factory=list)
    image_description: str = ""
    audio_description: str = ""
    speech_utterance: str = ""
    safety_label: str = ""
    safety_category: str = ""
    safety_subcategory: str = ""
    predicate: list[str] = field(default_factory=list)
    pair_external_id: str = ""
    source_url: str = ""
    licence: str = ""
    split: str = ""
    media: list[MediaRef] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    # What the reader found wrong with the row (values outside the format's own vocabulary);
    # reported together with every other problem of the row.
    problems: list[str] = field(default_factory=list)


@dataclass
class RowError:
    """A row that could not be read; the reader carries on with the next one."""

    row: int
    external_id: str
    message: str


_translate: Callable[[str], str] = str


def set_translator(translate: Callable[[str], str]) -> None:
    """Translate message templates with ``translate`` (the site installs Django's gettext).

    The parsers stay free of Django; `makemessages` collects the templates of every
    ``message(...)`` call (see mmooc_site's makemessages command).
    """
    global _translate
    _translate = translate


def message(template: str, **values: object) -> str:
    """Fill a user-facing message template, translated into the active language."""
    return _translate(template).format(**values)


def require_fields(record: dict[str, Any], groups: list[tuple[str, ...]], *, expected: str) -> None:
    """Refuse a file whose first record lacks a field of any group (one of its names).

    Such a file is another kind of file (another benchmark's records): one NotThisFormat for
    the whole file, saying what the format expects, instead of an error on every row.
    """
    missing = [" / ".join(group) for group in groups if not any(name in record for name in group)]
    if missing:
        found = ", ".join(shown(str(key)) for key in list(record)[:8]) or "-"
        raise NotThisFormat(
            message(
                "its first record has no field {missing} (it has: {found}); {expected}",
                missing=", ".join(missing),
                found=found,
                expected=expected,
            )
        )


def shown(text: str) -> str:
    """A text as a message may show it: NUL characters written as \\u0000 (PostgreSQL stores
    no NUL, and a message names the value it refuses)."""
    return text.replace("\x00", "\\u0000")


def hostile_problem(value: object) -> str | None:
    """Why a parsed row (a record, an item, a table row) cannot be stored, or None: a NUL
    character in any key or text, or nesting deeper than the API allows (core.limits).

    Every reader checks each row with it before reading its fields, so a hostile row is
    rejected as a row and the rest of the file imports.
    """
    found = find_hostile(value)
    if found is None:
        return None
    if found.kind == "nul":
        if found.field:
            return message(
                "the field '{field}' holds a NUL character (\\u0000), which cannot be stored",
                field=shown(found.field),
            )
        return message("the record holds a NUL character (\\u0000), which cannot be stored")
    if found.field:
        return message(
            "the field '{field}' is nested more than {depth} levels deep",
            field=shown(found.field),
            depth=MAX_JSON_DEPTH,
        )
    return message("the record is nested more than {depth} levels deep", depth=MAX_JSON_DEPTH)


def too_deep_problem() -> str:
    """The problem of a JSON text too deep for the parser to read at all."""
    return message("the record is nested more than {depth} levels deep", depth=MAX_JSON_DEPTH)


class TooDeepError(ValueError):
    """JSON text nested deeper than the API allows (its message says so)."""


def loads_json(text: str) -> Any:
    """``json.loads`` of a cell's text with the API's depth limit: JSON nested deeper than
    MAX_JSON_DEPTH (a RecursionError from about a thousand levels) is a TooDeepError, a
    ValueError like any other unreadable JSON."""
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise TooDeepError(too_deep_problem()) from exc
    found = find_hostile(value, max_depth=MAX_JSON_DEPTH)
    if found is not None and found.kind == "depth":
        raise TooDeepError(too_deep_problem())
    return value


def is_missing(value: object) -> bool:
    """Whether a cell holds no value (None, NaN, or an empty or 'nan' string).

    The text "None" is a value: it is a real option text in multiple-choice data.
    """
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str):
        return value.strip().lower() in {"", "nan"}
    return False


# The key (JSON lines) or column (Parquet) of this site's own formats that asks for a sample
# to be a gold item once verified; kept in the sample's ``extra`` under the same name.
GOLD_KEY = "gold"

# The keys of this site's own releases that say what the site made of a sample (its review
# trail, status, revision and content hash): the state of the release, not data of the sample,
# so an import never keeps them as custom fields.
RELEASE_STATE_KEYS = frozenset({"review", "status", "revision", "content_hash"})


def gold_flag(value: object) -> bool:
    """A ``gold`` cell: true or false (missing is false); anything else is refused."""
    if is_missing(value):
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    raise ValueError(message("'gold' is neither true nor false"))


def as_text(value: object) -> str:
    """A cell as text: missing values become "", numbers keep their plain spelling."""
    if is_missing(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value).strip()


# A row's licence: for every medium (``licence``, also spelled ``license``), or for the files
# of one role (``image_licence``, ``audio_licence``), which wins over the row's.
LICENCE_KEYS: tuple[str, ...] = ("licence", "license")


def medium_licence_key(role: str) -> str:
    """The column or key holding the licence of a row's files of ``role``."""
    return f"{role}_licence"


IMAGE_LICENCE_KEYS: tuple[str, ...] = ("image_licence", "image_license")
# Where a row's media come from (this site's releases write it beside the licences).
SOURCE_KEYS: tuple[str, ...] = ("source_url",)


def apply_licences(sample: ParsedSample, record: Mapping[str, Any]) -> None:
    """Read a row's licences into the sample (``licence``) and each of its media files, and
    where they come from (``source_url``) when the reader has not set it."""
    if not sample.source_url:
        sample.source_url = next(
            (as_text(record.get(key)) for key in SOURCE_KEYS if as_text(record.get(key))), ""
        )
    sample.licence = next(
        (as_text(record.get(key)) for key in LICENCE_KEYS if as_text(record.get(key))), ""
    )
    for ref in sample.media:
        own = as_text(record.get(medium_licence_key(ref.role))) or as_text(
            record.get(f"{ref.role}_license")
        )
        if own:
            ref.licence = own


def as_text_list(value: object, problems: list[str] | None = None) -> list[str]:
    """A list cell (a list, a JSON list or a comma-separated string) as a list of text.

    A JSON list nested past the API's limit is a problem added to ``problems`` (no list), or
    read as text when no ``problems`` are given.
    """
    if is_missing(value):
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                loaded = loads_json(text)
            except TooDeepError as exc:
                if problems is not None:
                    problems.append(str(exc))
                    return []
                loaded = None
            except ValueError:
                loaded = None
            if isinstance(loaded, list):
                return [as_text(item) for item in loaded if not is_missing(item)]
        return [part.strip() for part in text.split(",") if part.strip()]
    if isinstance(value, list | tuple):
        return [as_text(item) for item in value if not is_missing(item)]
    return [as_text(value)]


_DATA_URI = re.compile(r"^data:[\w/+.-]+;base64,", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")


def decode_base64(text: str) -> bytes:
    """Decode strict base64 (a data: URI prefix and line breaks allowed); ValueError if not."""
    if text:
        try:
            # The common case, plain base64 on one line, without the two substitutions
            # below (they scan and copy every byte): with validate, anything else is refused.
            return base64.b64decode(text, validate=True)
        except ValueError:  # binascii.Error, or a character outside ASCII
            pass
    cleaned = _WHITESPACE.sub("", _DATA_URI.sub("", text.strip()))
    if not cleaned:
        raise ValueError("empty")
    try:
        # Missing padding is common in hand-made files and harmless to restore.
        return base64.b64decode(cleaned + "=" * (-len(cleaned) % 4), validate=True)
    except binascii.Error as exc:
        raise ValueError(str(exc)) from exc


def looks_like_path(text: str) -> bool:
    """Whether an image cell is a file path rather than base64 ('.' is not base64)."""
    stripped = text.strip()
    if len(stripped) > 4096 or _DATA_URI.match(stripped):
        return False
    return "." in stripped or "\\" in stripped


def custom_cell(value: object) -> str:
    """A custom field as one text cell of this site's TSV and MMOOC layout, so that
    ``custom_value`` reads back the same value and type: text as it is, unless it would read
    as something else (a number, JSON, blanks, surrounding spaces), then as a JSON string;
    any other value (numbers, true/false, null, lists, objects) as JSON."""
    if isinstance(value, str) and _plain_text(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def _plain_text(text: str) -> bool:
    if is_missing(text) or text != text.strip():
        return False
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def custom_value(cell: str) -> Any:
    """A custom-field cell written by ``custom_cell`` as its value ("" is no value: callers
    leave the field out)."""
    try:
        return json.loads(cell)
    except ValueError:
        return cell


def json_safe(value: object) -> Any:
    """A value made JSON-serialisable for `extra` (bytes are dropped, NaN becomes None)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items() if not isinstance(v, bytes)}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value if not isinstance(v, bytes)]
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
