"""The limits every parsed value obeys, the API's request bodies and every import's rows alike:
no NUL character (PostgreSQL stores NUL in neither text nor JSON) and no nesting deeper than
MAX_JSON_DEPTH. Pure, so the import readers share it with the API's parsers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

MAX_JSON_DEPTH = 100


class TooDeep:
    """Stands for a JSON value the parser could not read for its depth (a RecursionError):
    a whole document keeps its other members, and this one is refused as too deep."""

    def __repr__(self) -> str:
        return "TooDeep()"


@dataclass(frozen=True)
class Hostile:
    """What is wrong with a value: a NUL character or nesting past the limit, and where (the
    key of the top-level object that holds it; "" for the value itself or a list's item)."""

    kind: Literal["nul", "depth"]
    field: str = ""


def find_hostile(value: object, *, max_depth: int = MAX_JSON_DEPTH) -> Hostile | None:
    """The first NUL character (in a text or a key) or nesting past ``max_depth`` containers
    in a parsed value (dicts, lists, tuples, texts, numbers), or None when there is none.

    Iterative, so a value of any depth is checked without a RecursionError.
    """
    stack: list[tuple[object, int, str]] = [(value, 1, "")]
    while stack:
        item, depth, field = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return Hostile("nul", field)
            continue
        if isinstance(item, TooDeep):
            return Hostile("depth", field)
        if not isinstance(item, dict | list | tuple):
            continue
        if depth > max_depth:
            return Hostile("depth", field)
        if isinstance(item, dict):
            for key, child in item.items():
                name = field or (key if depth == 1 and isinstance(key, str) else field)
                if isinstance(key, str) and "\x00" in key:
                    return Hostile("nul", name)
                stack.append((child, depth + 1, name))
        else:
            stack.extend((child, depth + 1, field) for child in item)
    return None


def json_size(value: object) -> int:
    """The characters of a parsed value written as JSON (as the database stores it)."""
    return len(json.dumps(value, ensure_ascii=False, default=str))
