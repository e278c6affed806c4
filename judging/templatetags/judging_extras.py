"""Template helpers of the judging pages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template
from django.utils.translation import gettext as _

from judging.consensus import ABSTAIN, ANSWERABLE, UNANSWERABLE
from judging.leaderboard import UNGROUPED

register = template.Library()


@register.filter
def get_item(mapping: Mapping[str, Any] | None, key: str) -> Any:
    """``mapping[key]`` in a template, None when absent."""
    return (mapping or {}).get(key)


@register.filter
def group_label(group: str) -> str:
    """A leaderboard group as the page names it (the items without a group read "no group")."""
    return _("no group") if group == UNGROUPED else group


@register.filter
def vote_label(label: str | None) -> str:
    """A judge's label as the sample page names it; "no vote" for an error or no clear vote."""
    labels = {
        ANSWERABLE: _("answerable"),
        UNANSWERABLE: _("unanswerable"),
        ABSTAIN: _("abstained"),
        "safe": _("safe"),
        "unsafe": _("unsafe"),
    }
    return labels.get(label or "", label or _("no vote"))
