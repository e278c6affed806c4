"""API authentication. Kept apart from the API plumbing: DRF imports authentication classes
while it builds its views, so this module must not import ``rest_framework.views``."""

from __future__ import annotations

from datetime import timedelta
from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import DEFAULT_DB_ALIAS, connection
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from core.prepared import hot_cursor
from core.roles import ROLES, roles_remember


@cache
def _token_user_sql() -> str:
    """The token's age, its user and the user's roles in one PostgreSQL statement."""
    users, tokens = User._meta.db_table, Token._meta.db_table
    links, groups = User.groups.through._meta.db_table, Group._meta.db_table
    columns = ", ".join(f'u."{f.column}"' for f in User._meta.concrete_fields)
    return (
        f"SELECT t.created, ARRAY(SELECT g.name FROM {links} ug JOIN {groups} g "  # noqa: S608 - model tables
        f"ON g.id = ug.group_id WHERE ug.user_id = u.id AND g.name = ANY(%s)), {columns} "
        f"FROM {tokens} t JOIN {users} u ON u.id = t.user_id WHERE t.key = %s"
    )


@cache
def _user_names() -> list[str]:
    return [f.attname for f in User._meta.concrete_fields]


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, refusing tokens older than ``API_TOKEN_DAYS``.

    On PostgreSQL the token, its user and the user's roles come in one statement, so that a
    request's permission checks (``core.roles``) need no query of their own.
    """

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        if connection.vendor == "postgresql":
            user, created = self._one_statement(key)
            token = Token(key=key, user=user, created=created)
        else:
            user, token = super().authenticate_credentials(key)
            created = token.created
        if created < timezone.now() - timedelta(days=settings.API_TOKEN_DAYS):
            raise exceptions.AuthenticationFailed(
                _("This token has expired: make a new one on your API token page.")
            )
        return user, token

    def _one_statement(self, key: str) -> tuple[User, Any]:
        with hot_cursor() as cursor:
            cursor.execute(_token_user_sql(), [list(ROLES), key])
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        created, role_names, *values = row
        user = User.from_db(DEFAULT_DB_ALIAS, _user_names(), values)
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        roles_remember(user, role_names)
        return user, created
