"""The columns the sample list can show, and the page sizes it offers.

The set is fixed: a person (or a saved view) chooses which of them show, and they always show
in this order. The external id is always shown, since it links to the sample's page.
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
DEFAULT_COLUMNS = ("media", "external_id", "question", "category", "status", "priority", "gold")
PAGE_SIZES = (25, 50, 100, 200)
DEFAULT_PAGE_SIZE = 50


def columns_clean(keys: Iterable[str]) -> tuple[str, ...]:
    """Chosen column keys in the list's order, the external id added; a ValidationError
    names the first unknown key."""
    chosen = {str(key).strip() for key in keys if str(key).strip()}
    unknown = sorted(chosen - set(BY_KEY))
    if unknown:
        raise ValidationError(
            {
                "columns": _("Unknown column “%(column)s” (known: %(known)s).")
                % {"column": unknown[0][:50], "known": ", ".join(BY_KEY)}
            },
            code="bad_column",
        )
    return tuple(c.key for c in COLUMNS if c.key in chosen or c.always)


def columns_shown(keys: Iterable[str], *, lead: bool) -> tuple[str, ...]:
    """The columns of a stored or requested choice that this person sees: unknown keys (a
    column since retired) dropped, the leads' columns only for leads."""
    chosen = set(keys)
    return tuple(
        c.key for c in COLUMNS if (c.key in chosen or c.always) and (lead or not c.leads_only)
    )


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


def choices(*, lead: bool) -> list[Column]:
    """The columns this person may choose from."""
    return [c for c in COLUMNS if lead or not c.leads_only]
