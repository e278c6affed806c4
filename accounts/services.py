"""Writes and reads of a user's account settings: the remembered language."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User

from accounts.models import UserPreference


def user_set_language(*, user: User, language: str) -> None:
    if language not in dict(settings.LANGUAGES):
        raise ValueError(f"unknown language {language!r}")
    UserPreference.objects.update_or_create(user=user, defaults={"language": language})


def user_language(*, user: User) -> str:
    """The language a user chose, or '' to follow the browser."""
    preference = UserPreference.objects.filter(user=user).only("language").first()
    return preference.language if preference else ""
