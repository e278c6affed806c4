"""The columns the sample list can show, and the page sizes it offers.

The set is fixed: a person (or a saved view) chooses which of them show and in what order. The
external id is always shown, since it links to the sample's page: where it is placed, or else
where it comes in the list's own order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy


@dataclass(frozen=True)
class Column:
    key: str
    label: Promise
    leads_only: bool = False  # reviewers must not learn which samples are gold
    always: bool = False


COLUMNS = (
    Column("id", gettext_lazy("Id")),
    Column("media", gettext_lazy("Media")),
    Column("external_id", gettext_lazy("External id"), always=True),
    Column("question", gettext_lazy("Question")),
    Column("reference_answer", gettext_lazy("Reference answer")),
    Column("category", gettext_lazy("Category")),
    Column("question_format", gettext_lazy("Question format")),
    Column("scenario", gettext_lazy("Scenario")),
    Column("answerability", gettext_lazy("Answerability group")),
    Column("split", gettext_lazy("Split")),
    Column("status", gettext_lazy("Status")),
    Column("priority", gettext_lazy("Priority")),
    Column("gold", gettext_lazy("Gold"), leads_only=True),
    Column("created", gettext_lazy("Imported on")),
    Column("updated", gettext_lazy("Last change")),
)
BY_KEY = {column.key: column for column in COLUMNS}
_RANK = {column.key: rank for rank, column in enumerate(COLUMNS)}
DEFAULT_COLUMNS = ("media", "external_id", "question", "category", "status", "priority", "gold")
PAGE_SIZES = (25, 50, 100, 200)
DEFAULT_PAGE_SIZE = 50


def _ordered(keys: Iterable[str]) -> list[str]:
    """Known keys in the order given, each once where it first came; a column always shown
    that is not among them goes before the first that follows it in the list's own order (so
    a choice in that order keeps it)."""
    chosen = [key for key in dict.fromkeys(keys) if key in BY_KEY]
    for column in COLUMNS:
        if column.always and column.key not in chosen:
            later = (i for i, key in enumerate(chosen) if _RANK[key] > _RANK[column.key])
            chosen.insert(next(later, len(chosen)), column.key)
    return chosen


def columns_clean(keys: Iterable[str]) -> tuple[str, ...]:
    """Chosen column keys in the order given (a key given twice kept where it came first),
    the external id added when left out; a ValidationError names the first unknown key."""
    given = [str(key).strip() for key in keys if str(key).strip()]
    unknown = sorted(set(given) - set(BY_KEY))
    if unknown:
        raise ValidationError(
            {
                "columns": _("Unknown column “%(column)s” (known: %(known)s).")
                % {"column": unknown[0][:50], "known": ", ".join(BY_KEY)}
            },
            code="bad_column",
        )
    return tuple(_ordered(given))


def columns_shown(keys: Iterable[str], *, lead: bool) -> tuple[str, ...]:
    """The columns of a stored or requested choice that this person sees, in its order:
    unknown keys (a column since retired) dropped, the leads' columns only for leads."""
    return tuple(key for key in _ordered(keys) if lead or not BY_KEY[key].leads_only)


def page_size_clean(raw: object) -> int:
    """A page size the list offers, or a ValidationError saying which ones it does."""
    try:
        size = int(str(raw).strip())
    except ValueError:
        size = 0
    if size not in PAGE_SIZES:
        raise ValidationError(
            {
                "page_size": _("Choose one of these page sizes: %(sizes)s.")
                % {"sizes": ", ".join(str(s) for s in PAGE_SIZES)}
            },
            code="bad_page_size",
        )
    return size


def choices(*, lead: bool, shown: Iterable[str] = ()) -> list[Column]:
    """The columns this person may choose from: those shown first, in their order, then the
    others in the list's."""
    first = [BY_KEY[key] for key in dict.fromkeys(shown) if key in BY_KEY]
    rest = [c for c in COLUMNS if c not in first]
    return [c for c in (*first, *rest) if lead or not c.leads_only]
