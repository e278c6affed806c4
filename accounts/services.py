"""Writes and reads of a user's account settings: the remembered language and theme."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from rest_framework.authtoken.models import Token

from accounts.models import Theme, UserPreference


def user_set_language(*, user: User, language: str) -> None:
    if language not in dict(settings.LANGUAGES):
        raise ValueError(f"unknown language {language!r}")
    UserPreference.objects.update_or_create(user=user, defaults={"language": language})


def user_language(*, user: User) -> str:
    """The language a user chose, or '' to follow the browser."""
    preference = UserPreference.objects.filter(user=user).only("language").first()
    return preference.language if preference else ""


def user_set_theme(*, user: User, theme: str) -> None:
    if theme not in Theme.values:
        raise ValueError(f"unknown theme {theme!r}")
    UserPreference.objects.update_or_create(user=user, defaults={"theme": theme})


def user_theme(*, user: User) -> str:
    """The theme a user chose, or '' to follow the system."""
    preference = UserPreference.objects.filter(user=user).only("theme").first()
    return preference.theme if preference else ""


def api_token_create(*, user: User) -> Token:
    """A new API token for the user; the previous one, if any, stops working."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def api_token_revoke(*, user: User) -> bool:
    """Delete the user's API token; True when there was one."""
    deleted, _rows = Token.objects.filter(user=user).delete()
    return deleted > 0
