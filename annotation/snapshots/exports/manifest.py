"""The manifest of a snapshot: what is inside (counts), how it was chosen (filter), with what
(app version), the sha256 of every file, and what changed since the previous snapshot.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.snapshots.exports.files import file_sha256
from annotation.snapshots.exports.records import ExportRecord

MANIFEST_VERSION = 1
_COUNTED = {
    "category": "category_code",
    "format": "question_format",
    "scenario": "scenario",
    "group": "answerability_group",
    "split": "split",
    "safety_category": "safety_category",
    "safety_label": "safety_label",
}


@dataclass
class Tally:
    """Counts of the exported samples per category, format, scenario, … ("" = not set)."""

    samples: int = 0
    media_files: int = 0
    by: dict[str, Counter[str]] = field(default_factory=lambda: {k: Counter() for k in _COUNTED})

    def add(self, record: ExportRecord) -> None:
        self.samples += 1
        self.media_files += len(record.media)
        for key, label_field in _COUNTED.items():
            self.by[key][record.text(label_field)] += 1

    def counted(self, records: Iterable[ExportRecord]) -> Iterator[ExportRecord]:
        """Pass records through, counting each one."""
        for record in records:
            self.add(record)
            yield record

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"samples": self.samples, "media_files": self.media_files}
        for key, counter in self.by.items():
            if any(counter.keys() - {""}):
                data[key] = dict(sorted(counter.items()))
        return data


def file_hashes(root: Path, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """sha256 and size of each named file under ``root``."""
    return {
        name: {"sha256": file_sha256(root / name), "bytes": (root / name).stat().st_size}
        for name in names
    }


@dataclass(frozen=True)
class Diff:
    """What changed since the previous snapshot, by external id."""

    added: int
    removed: int
    changed: int
    unchanged: int
    taken_down: list[str]
    examples: dict[str, list[str]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "taken_down": self.taken_down,
            "examples": self.examples,
        }


def build_manifest(
    *,
    snapshot: dict[str, Any],
    dataset: dict[str, Any],
    filter: dict[str, Any],
    app_version: str,
    tally: Tally,
    files: dict[str, dict[str, Any]],
    artifact: dict[str, Any],
    previous: dict[str, Any] | None,
    diff: Diff | None,
    notes: dict[str, Any] | None = None,
    sections: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest as plain JSON (data: never translated). ``sections`` are the keys other
    apps add (``annotation.extensions.manifest_sections``)."""
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "snapshot": snapshot,
        "dataset": dataset,
        "filter": filter,
        "app_version": app_version,
        "counts": tally.as_dict(),
        "files": files,
        "artifact": artifact,
        "previous": previous,
        "diff": diff.as_dict() if diff else None,
        **({"notes": notes} if notes else {}),
    }
    # A section never replaces one of the manifest's own keys.
    return manifest | {k: v for k, v in (sections or {}).items() if k not in manifest}
