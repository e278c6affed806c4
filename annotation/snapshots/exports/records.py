"""What a writer receives for each exported sample, and the field lists every format shares."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from annotation.formats.records import LABEL_FIELDS, custom_cell

# The label fields of a sample by the shape of their values (together: LABEL_FIELDS).
STRING_LIST_FIELDS: tuple[str, ...] = ("generator_models", "predicate")
OPTION_FIELD = "options"
TEXT_FIELDS: tuple[str, ...] = tuple(
    name for name in LABEL_FIELDS if name not in (*STRING_LIST_FIELDS, OPTION_FIELD)
)
LABEL_FIELD_NAMES: frozenset[str] = frozenset((*TEXT_FIELDS, *STRING_LIST_FIELDS, OPTION_FIELD))


@dataclass(frozen=True)
class ExportMedia:
    """One media file of a sample; ``read`` loads its bytes only when a writer needs them."""

    role: str
    position: int
    sha256: str
    mime_type: str
    extension: str
    read: Callable[[], bytes]
    licence: str = ""
    source_url: str = ""

    @property
    def archive_path(self) -> str:
        """Where the file lives inside an exported folder or zip (one copy per content)."""
        return f"media/{self.role}/{self.sha256}{self.extension}"


@dataclass
class ExportRecord:
    """A sample as it goes into a release: final labels, media, provenance and review trail."""

    external_id: str
    labels: dict[str, Any]
    content_hash: str
    status: str = ""
    revision: int = 1
    pair_external_id: str = ""
    media: list[ExportMedia] = field(default_factory=list)
    review: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def text(self, name: str) -> str:
        value = self.labels.get(name)
        return value if isinstance(value, str) else ""

    def string_list(self, name: str) -> list[str]:
        value = self.labels.get(name) or []
        return [str(item) for item in value] if isinstance(value, list) else []

    def options(self) -> list[dict[str, str]]:
        value = self.labels.get(OPTION_FIELD) or []
        if not isinstance(value, list):
            return []
        return [
            {"label": str(item.get("label", "")), "text": str(item.get("text", ""))}
            for item in value
            if isinstance(item, dict)
        ]

    def media_of(self, role: str) -> list[ExportMedia]:
        return sorted((m for m in self.media if m.role == role), key=lambda m: m.position)

    @property
    def licence(self) -> str:
        """The licence every media file shares; empty when they differ (or none has one):
        then each medium's is in ``licence_of``."""
        found = {m.licence for m in self.media}
        return found.pop() if len(found) == 1 else ""

    def licence_of(self, role: str) -> str:
        """The licence of the sample's files of one role (several, distinct ones joined by
        "; "), so a tri-modal scenario's image licence never hides behind its audio's."""
        return "; ".join(dict.fromkeys(m.licence for m in self.media_of(role) if m.licence))

    @property
    def source_url(self) -> str:
        return next((m.source_url for m in self.media if m.source_url), "")

    def extra_text(self, key: str) -> str:
        """A custom field as one typed cell (``custom_cell``: the readers give back the same
        value, nested ones included); a field the sample does not have is ""."""
        return custom_cell(self.extra[key]) if key in self.extra else ""


def extra_columns(keys: Iterable[str], taken: Iterable[str]) -> list[str]:
    """The custom fields (``extra`` keys) written as columns of their own, in order, leaving
    out any that would shadow one of the format's columns."""
    used = set(taken)
    return [key for key in dict.fromkeys(keys) if key and key not in used]
