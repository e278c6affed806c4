"""Template helpers of the judging pages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

register = template.Library()


@register.filter
def get_item(mapping: Mapping[str, Any] | None, key: str) -> Any:
    """``mapping[key]`` in a template, None when absent."""
    return (mapping or {}).get(key)
