"""Declarative field lists of the readers and writers, from which the format reference is made.

Each reader and writer states its fields here-shaped (name, whether it is required, the aliases
it also accepts, the values it allows) beside the code that reads them, and uses these lists
itself where it can, so the reference (``docs/formats.md``, the site's format page) is generated
from what the code reads and cannot drift from it. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Field:
    """One field (key, column) of a format."""

    name: str
    description: str
    required: bool = False
    aliases: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The name and its aliases, in the order a reader tries them."""
        return (self.name, *self.aliases)


@dataclass(frozen=True)
class FormatSpec:
    """A format as the reference shows it: what it carries, its layout and fields, and an
    example file (a path under ``docs/formats/examples/``) that the tests import."""

    code: str
    title: str
    direction: str  # "in" (an import) or "out" (an export)
    carries: str  # samples | responses | verdicts | responses and verdicts | release
    layout: str
    fields: tuple[Field, ...]
    example: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    # A second table of fields, for formats made of two kinds of file (lmms-eval's results
    # file beside its samples files; VLMEvalKit's evaluated files beside its predictions).
    other_fields_title: str = ""
    other_fields: tuple[Field, ...] = ()

    def field(self, name: str) -> Field:
        for item in (*self.fields, *self.other_fields):
            if item.name == name:
                return item
        raise KeyError(name)

    def names(self, name: str) -> tuple[str, ...]:
        """The names a reader accepts for the field ``name`` (the name, then its aliases)."""
        return self.field(name).names

    def all_names(self) -> set[str]:
        """Every name and alias of the main table."""
        return {n for item in self.fields for n in item.names}

    def required(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.fields if item.required)


def fields_named(fields: Iterable[Field]) -> dict[str, Field]:
    return {item.name: item for item in fields}
