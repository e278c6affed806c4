"""The Label Studio JSON release: tasks Label Studio 1.23 imports, with the verified labels as
each task's annotation, and the labelling interface (``label_config.xml``) for the project.

Images go inline as data: URIs so that the file stands alone in Label Studio; the format is
read back by ``annotation.formats.labelstudio`` (with ``release_mapping``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from annotation.formats.labelstudio import CHOICE_FIELDS, export_task, label_config
from annotation.snapshots.exports.records import ExportRecord

TASKS_FILE = "labelstudio.json"
CONFIG_FILE = "label_config.xml"


def write_labelstudio(records: Iterable[ExportRecord], out: Path) -> int:
    """Write ``labelstudio.json`` (streamed, one task after another) and the project's label
    config; returns the number of tasks."""
    choices: dict[str, set[str]] = defaultdict(set)
    count = 0
    with open(out / TASKS_FILE, "w", encoding="utf-8") as handle:
        handle.write("[\n")
        for record in records:
            image = next((m for m in record.media if m.role == "image"), None)
            task = export_task(
                external_id=record.external_id,
                fields={**record.labels, "options": record.options()},
                image=(image.mime_type, image.read()) if image is not None else None,
                meta={
                    "status": record.status,
                    "revision": record.revision,
                    "content_hash": record.content_hash,
                },
            )
            for name in CHOICE_FIELDS:
                if record.text(name):
                    choices[name].add(record.text(name))
            handle.write(",\n" if count else "")
            handle.write(json.dumps(task, ensure_ascii=False))
            count += 1
        handle.write("\n]\n")
    (out / CONFIG_FILE).write_text(label_config(choices), encoding="utf-8")
    return count
