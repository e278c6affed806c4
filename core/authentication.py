"""API authentication. Kept apart from the API plumbing: DRF imports authentication classes
while it builds its views, so this module must not import ``rest_framework.views``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, refusing tokens older than ``API_TOKEN_DAYS``."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        user, token = super().authenticate_credentials(key)
        if token.created < timezone.now() - timedelta(days=settings.API_TOKEN_DAYS):
            raise exceptions.AuthenticationFailed(
                _("This token has expired: make a new one on your API token page.")
            )
        return user, token
