"""The Label Studio JSON release: tasks Label Studio 1.23 imports, with the verified labels as
each task's annotation, and the labelling interface (``label_config.xml``) for the project.

Images go inline as data: URIs so that the file stands alone in Label Studio; every label
field, each medium's licence, the source and the custom fields go in each task's data, so the
format is read back whole by ``annotation.formats.labelstudio`` (with ``release_mapping``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from annotation.formats.labelstudio import CHOICE_FIELDS, export_task, label_config
from annotation.snapshots.exports.records import ExportRecord

TASKS_FILE = "labelstudio.json"
CONFIG_FILE = "label_config.xml"


def write_labelstudio(
    records: Iterable[ExportRecord], out: Path, *, extra_keys: Sequence[str] = ()
) -> int:
    """Write ``labelstudio.json`` (streamed, one task after another) and the project's label
    config; returns the number of tasks. ``extra_keys`` are the custom fields a task's data
    carries (the other apps' notes kept in ``extra`` are not among them)."""
    choices: dict[str, set[str]] = defaultdict(set)
    count = 0
    with open(out / TASKS_FILE, "w", encoding="utf-8") as handle:
        handle.write("[\n")
        for record in records:
            images = [(m.mime_type, m.read()) for m in record.media_of("image")]
            task = export_task(
                external_id=record.external_id,
                fields={**record.labels, "options": record.options()},
                image=images[0] if images else None,
                more_images=images[1:],
                media=[
                    {"role": m.role, "position": m.position, "licence": m.licence}
                    for m in sorted(record.media, key=lambda m: (m.role, m.position))
                ],
                source_url=record.source_url,
                extra={k: record.extra[k] for k in extra_keys if k in record.extra},
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
