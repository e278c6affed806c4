"""Model fields that the apps declare alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.db.models.expressions import Combinable


def created_by_field(**options: Any) -> models.ForeignKey[User | Combinable | None, User | None]:
    """The user who made a row: null once that user is deleted, with no reverse accessor."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        **options,
    )
