"""Template helpers of the judging pages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template
from django.utils.translation import gettext as _

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
