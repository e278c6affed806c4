"""Comparing two snapshots: which external ids were added, removed, taken down and changed,
and for a changed sample which fields changed (old → new), shortened for a page.

Pure computation over two id-ordered streams of entries (a merge join: memory stays flat
however many samples the snapshots hold); it imports no Django.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Entry(NamedTuple):
    """One sample in a snapshot; ``taken_down``: the sample has since been taken down. (A
    named tuple: built several times faster than a frozen dataclass, once per entry.)"""

    external_id: str
    content_hash: str
    taken_down: bool = False


@dataclass(frozen=True)
class Change:
    """A sample in both snapshots with different content."""

    external_id: str
    old_hash: str
    new_hash: str


@dataclass
class EntryDiff:
    """From a base snapshot to another: counts, and the first ids of each kind (``keep`` of
    each unless told otherwise; the changed ones from ``changed_from`` on, for paging)."""

    added: int = 0
    removed: int = 0
    taken_down: int = 0
    changed: int = 0
    unchanged: int = 0
    added_ids: list[str] = field(default_factory=list)
    removed_ids: list[str] = field(default_factory=list)
    taken_down_ids: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def _ordered(entries: Iterable[Entry]) -> Iterator[Entry]:
    """The entries, refusing any out of strictly increasing id order (the merge needs it)."""
    last: str | None = None
    for entry in entries:
        if last is not None and entry.external_id <= last:
            raise ValueError(f"entries out of order: {entry.external_id!r} after {last!r}")
        last = entry.external_id
        yield entry


def entry_diff(
    base: Iterable[Entry],
    other: Iterable[Entry],
    *,
    keep: int,
    changed_from: int = 0,
    changed_keep: int | None = None,
    taken_down_keep: int | None = None,
) -> EntryDiff:
    """What changed from ``base`` to ``other``, both ordered by external id (code points).

    Added: in ``other`` only; removed: in ``base`` only (taken down: removed ones whose sample
    has since been taken down); changed: in both with another content hash.
    """
    changed_keep = keep if changed_keep is None else changed_keep
    taken_down_keep = keep if taken_down_keep is None else taken_down_keep
    diff = EntryDiff()
    old_entries, new_entries = _ordered(base), _ordered(other)
    old, new = next(old_entries, None), next(new_entries, None)
    while old is not None or new is not None:
        if new is None or (old is not None and old.external_id < new.external_id):
            assert old is not None
            diff.removed += 1
            if len(diff.removed_ids) < keep:
                diff.removed_ids.append(old.external_id)
            if old.taken_down:
                diff.taken_down += 1
                if len(diff.taken_down_ids) < taken_down_keep:
                    diff.taken_down_ids.append(old.external_id)
            old = next(old_entries, None)
        elif old is None or new.external_id < old.external_id:
            diff.added += 1
            if len(diff.added_ids) < keep:
                diff.added_ids.append(new.external_id)
            new = next(new_entries, None)
        else:
            if old.content_hash == new.content_hash:
                diff.unchanged += 1
            else:
                if changed_from <= diff.changed < changed_from + changed_keep:
                    diff.changes.append(Change(new.external_id, old.content_hash, new.content_hash))
                diff.changed += 1
            old, new = next(old_entries, None), next(new_entries, None)
    return diff


@dataclass(frozen=True)
class FieldChange:
    """One field of a changed sample, its old and new value as (possibly shortened) text."""

    name: str
    old: str
    new: str


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _window(text: str, start: int, width: int) -> str:
    """``width`` characters of ``text`` from ``start``, with "…" where text was cut."""
    if len(text) <= width:
        return text
    head = "…" if start > 0 else ""
    tail = "…" if start + width < len(text) else ""
    return f"{head}{text[start : start + width]}{tail}"


def field_changes(
    old: Mapping[str, Any], new: Mapping[str, Any], *, width: int = 160
) -> list[FieldChange]:
    """The fields whose values differ, by name; a field absent on one side counts as empty.

    A long value is shortened to ``width`` characters around the first difference (the same
    window on both sides), so the edit shows even in the middle of a long text.
    """
    changes = []
    for name in sorted(old.keys() | new.keys()):
        before, after = _text(old.get(name)), _text(new.get(name))
        if before == after:
            continue
        # One window for both sides, a little before the first difference (and never past
        # the longer text's end), so that the two shortened values still differ.
        longest = max(len(before), len(after))
        start = max(0, min(_common_prefix(before, after) - width // 4, longest - width))
        changes.append(
            FieldChange(name, _window(before, start, width), _window(after, start, width))
        )
    return changes
