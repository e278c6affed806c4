"""The dataset card (``README.md``) of a Hugging Face folder: YAML front matter that
``datasets`` and the Hub read (configs, features, splits with their sizes, licence, task,
size category), then a short description.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from annotation.snapshots.exports.records import OPTION_FIELD, STRING_LIST_FIELDS

DEFAULT_SPLIT = "train"
MORE_IMAGES = "more_images"

# Licence ids the Hub knows, for the licences a media file commonly declares.
HUB_LICENCES = frozenset(
    {
        "apache-2.0",
        "mit",
        "cc0-1.0",
        "cc-by-2.0",
        "cc-by-3.0",
        "cc-by-4.0",
        "cc-by-sa-3.0",
        "cc-by-sa-4.0",
        "cc-by-nc-2.0",
        "cc-by-nc-3.0",
        "cc-by-nc-4.0",
        "cc-by-nc-sa-3.0",
        "cc-by-nc-sa-4.0",
        "cc-by-nd-4.0",
        "cc-by-nc-nd-3.0",
        "cc-by-nc-nd-4.0",
        "odc-by",
        "odbl",
        "pddl",
        "gpl-3.0",
        "bsd-3-clause",
    }
)
# The Hub's size categories, by the upper bound of the number of rows.
SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
)
_LICENCE_SEPARATORS = re.compile(r"[\s_]+")


@dataclass
class HfCard:
    """What the dataset card says besides the features."""

    title: str
    description: str = ""
    version: str = ""
    licence_note: str = ""
    extra_lines: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SplitSize:
    """A split's rows and bytes, as the card's ``dataset_info.splits`` declares them."""

    rows: int
    num_bytes: int = 0
    file_bytes: int = 0


def hub_licence(licences: Iterable[str]) -> str:
    """The card's ``license``: the Hub's id when every licensed file shares one it knows,
    ``other`` when files name other or several licences, ``unknown`` when none names one."""
    named = {_LICENCE_SEPARATORS.sub("-", value.strip().lower()) for value in licences}
    named.discard("")
    if not named:
        return "unknown"
    if len(named) == 1 and (only := next(iter(named))) in HUB_LICENCES:
        return only
    return "other"


def size_category(rows: int) -> str:
    return next((name for bound, name in SIZE_CATEGORIES if rows < bound), "n>10M")


def task_categories(*, with_audio: bool) -> list[str]:
    return ["any-to-any"] if with_audio else ["visual-question-answering"]


def _feature_lines(columns: Iterable[str]) -> list[str]:
    lines: list[str] = []
    for name in columns:
        lines.append(f"  - name: {name}")
        if name in {"image", "audio"}:
            lines.append(f"    dtype: {name}")
        elif name == MORE_IMAGES:
            lines.append("    sequence: image")
        elif name == OPTION_FIELD:
            lines += [
                "    list:",
                "    - name: label",
                "      dtype: string",
                "    - name: text",
                "      dtype: string",
            ]
        elif name in STRING_LIST_FIELDS:
            lines.append("    sequence: string")
        else:
            lines.append("    dtype: string")
    return lines


def dataset_card(
    card: HfCard,
    sizes: dict[str, SplitSize],
    *,
    columns: Iterable[str],
    with_audio: bool,
    licence: str = "unknown",
) -> str:
    """The README.md. Free text in the YAML (the title) is written as a JSON string, which YAML
    reads unchanged; every other value is a name the Hub knows."""
    splits = sizes or {DEFAULT_SPLIT: SplitSize(rows=0)}
    rows = sum(size.rows for size in splits.values())
    lines = [
        "---",
        f"pretty_name: {json.dumps(card.title, ensure_ascii=False)}",
        f"license: {licence}",
        "task_categories:",
        *(f"- {task}" for task in task_categories(with_audio=with_audio)),
        "size_categories:",
        f"- {size_category(rows)}",
        "configs:",
        "- config_name: default",
        "  data_files:",
    ]
    for split in splits:
        lines += [f"  - split: {split}", f"    path: data/{split}-*.parquet"]
    lines += ["dataset_info:", "  features:", *_feature_lines(columns), "  splits:"]
    for split, size in splits.items():
        lines += [
            f"  - name: {split}",
            f"    num_bytes: {size.num_bytes}",
            f"    num_examples: {size.rows}",
        ]
    lines += [
        f"  download_size: {sum(size.file_bytes for size in splits.values())}",
        f"  dataset_size: {sum(size.num_bytes for size in splits.values())}",
        "---",
        "",
        f"# {card.title}",
        "",
    ]
    if card.description:
        lines += [card.description, ""]
    if card.version:
        lines += [f"Version: {card.version}", ""]
    lines += [*card.extra_lines]
    if card.licence_note:
        lines += ["", card.licence_note]
    if licence == "other":
        lines += [
            "",
            "The media files carry several licences: each row's are in `image_licence` "
            "and `audio_licence` (and in `licence` when its files share one).",
        ]
    lines += [
        "",
        "Load with `datasets.load_dataset(<this folder>)`. The `review` column holds each "
        "sample's review trail as JSON, `extra` the sample's custom fields as JSON.",
        "",
    ]
    return "\n".join(lines)
