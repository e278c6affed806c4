"""The sample list's filter and bulk actions: one definition for the page and the API.

``SampleFilter.from_params`` reads ``?search=&status=&category=&question_format=&scenario=
&external_id=&judges_disagree=&reviewer=&changed=&duplicates=&gold=&ordering=`` and says what it
could not use; ``to_params`` writes it back (paging and bulk actions keep the filter); the selector
``annotation.selectors.sample_list_filtered`` applies it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from django.db import models
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.models import SampleStatus


class BulkAction(models.TextChoices):
    """What a lead may do to a selection of the sample list."""

    SEND_TO_REVIEW = "send_to_review", gettext_lazy("Send to review")
    SET_PRIORITY = "set_priority", gettext_lazy("Set priority")
    TAKE_DOWN = "take_down", gettext_lazy("Take down")
    RESTORE = "restore", gettext_lazy("Restore")
    ASSIGN = "assign", gettext_lazy("Assign to annotators")
    UNASSIGN = "unassign", gettext_lazy("Unassign")


# Sort keys offered to users, and the columns each one orders by (id breaks ties).
ORDERINGS: dict[str, tuple[str, ...]] = {
    "id": ("id",),
    "external_id": ("external_id", "id"),
    "status": ("status", "id"),
    "category": ("category_code", "id"),
    "priority": ("priority", "id"),
    "updated": ("updated_at", "id"),
}
ORDERING_LABELS = {
    "id": gettext_lazy("Import order"),
    "external_id": gettext_lazy("External id"),
    "status": gettext_lazy("Status"),
    "category": gettext_lazy("Category"),
    "priority": gettext_lazy("Priority"),
    "updated": gettext_lazy("Last change"),
}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_TEXT_KEYS = ("search", "category", "question_format", "scenario", "external_id", "reviewer")
MAX_TEXT = 200


class FilterError(ValueError):
    """Query parameters the filter cannot use, with a readable message per parameter."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in problems.items()))
        self.problems = problems


@dataclass(frozen=True)
class SampleFilter:
    search: str = ""
    statuses: tuple[str, ...] = ()
    category: str = ""
    question_format: str = ""
    scenario: str = ""
    external_id: str = ""
    judges_disagree: bool | None = None
    reviewer: str = ""
    changed: bool = False
    # True: only samples in a possible duplicate pair (either side); False: none of them.
    duplicates: bool | None = None
    # True: only gold items; False: none of them (leads only: reviewers must not learn them).
    gold: bool | None = None
    ordering: str = "id"
    problems: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> SampleFilter:
        """Read a filter from query parameters (a QueryDict or a plain mapping).

        Values it cannot use are left out and described in ``problems``; ``strict()`` turns
        them into a FilterError for the API.
        """
        problems: dict[str, str] = {}
        values: dict[str, Any] = {}
        for key in _TEXT_KEYS:
            text = str(params.get(key) or "").strip()
            if len(text) > MAX_TEXT:
                problems[key] = _("Keep it under %(n)d characters.") % {"n": MAX_TEXT}
                continue
            values[key] = text
        statuses = _getlist(params, "status")
        unknown = [s for s in statuses if s not in SampleStatus.values]
        if unknown:
            problems["status"] = _("Unknown status “%(status)s” (known: %(known)s).") % {
                "status": unknown[0],
                "known": ", ".join(SampleStatus.values),
            }
        values["statuses"] = tuple(dict.fromkeys(s for s in statuses if s in SampleStatus.values))
        for key in ("judges_disagree", "changed", "duplicates", "gold"):
            raw = str(params.get(key) or "").strip().lower()
            if raw in _TRUE:
                values[key] = True
            elif raw in _FALSE:
                values[key] = False
            elif raw:
                problems[key] = _("Use true or false.")
        ordering = str(params.get("ordering") or "id").strip()
        if ordering.removeprefix("-") not in ORDERINGS:
            problems["ordering"] = _("Sort by one of: %(known)s.") % {"known": ", ".join(ORDERINGS)}
            ordering = "id"
        values["ordering"] = ordering
        return cls(**values, problems=problems)

    def strict(self) -> SampleFilter:
        """The filter itself, or a FilterError when a parameter could not be used."""
        if self.problems:
            raise FilterError(self.problems)
        return self

    def order_by(self) -> tuple[str, ...]:
        descending = self.ordering.startswith("-")
        columns = ORDERINGS[self.ordering.removeprefix("-")]
        return tuple(f"-{c}" for c in columns) if descending else columns

    def to_params(self) -> list[tuple[str, str]]:
        """The filter as query parameters, defaults left out (for links and hidden fields)."""
        params: list[tuple[str, str]] = []
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "problems" or value in ("", (), None, False):
                continue
            if item.name == "ordering" and value == "id":
                continue
            if item.name == "statuses":
                params += [("status", status) for status in value]
            elif isinstance(value, bool):
                params.append((item.name, "true" if value else "false"))
            else:
                params.append((item.name, str(value)))
        return params

    @property
    def is_empty(self) -> bool:
        return not [p for p in self.to_params() if p[0] != "ordering"]


def _getlist(params: Mapping[str, Any], key: str) -> list[str]:
    getlist = getattr(params, "getlist", None)
    raw = getlist(key) if getlist is not None else params.get(key)
    if raw is None:
        return []
    items = raw if isinstance(raw, list | tuple) else [raw]
    return [str(v).strip() for item in items for v in str(item).split(",") if str(v).strip()]
