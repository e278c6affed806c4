"""Reads of a user's account settings."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token


@dataclass(frozen=True)
class TokenState:
    created: dt.datetime
    expires: dt.datetime
    expired: bool


def api_token_state(*, user: User, now: dt.datetime) -> TokenState | None:
    """When the user's API token was made and when it expires (never its key), or None."""
    token = Token.objects.filter(user=user).only("created").first()
    if token is None:
        return None
    expires = token.created + dt.timedelta(days=settings.API_TOKEN_DAYS)
    return TokenState(created=token.created, expires=expires, expired=expires <= now)
