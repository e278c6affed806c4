"""The authentication backend of a sign-in's second step.

The password step (Django's ModelBackend) found the person; the second step gives their
username, the id the first step left in the session and a code. Going through
``django.contrib.auth.authenticate`` makes django-axes treat the code as it treats a
password: a locked-out username and address is refused before the code is tried, and a
wrong code is a failed sign-in that counts toward the lockout.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.http import HttpRequest

from accounts import second_factor


class SecondFactorBackend(ModelBackend):
    """Authenticates ``username`` + ``second_factor_token`` for the person whose password was
    right a moment ago (``pending_user_id``, read by the view from their session)."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        *,
        second_factor_token: str | None = None,
        pending_user_id: int | None = None,
        **kwargs: Any,
    ) -> User | None:
        if second_factor_token is None or pending_user_id is None or password is not None:
            return None
        user = get_user_model().objects.filter(pk=pending_user_id, username=username).first()
        if user is None or not self.user_can_authenticate(user):
            return None
        verified = second_factor.second_factor_verify(user=user, code=second_factor_token)
        if verified is None:
            return None
        user.second_factor = verified  # type: ignore[attr-defined]
        return user
