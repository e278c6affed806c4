"""API authentication. Kept apart from the API plumbing: DRF imports authentication classes
while it builds its views, so this module must not import ``rest_framework.views``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import DEFAULT_DB_ALIAS, connection
from django.utils import timezone
from django.utils.translation import gettext as _
from psycopg import sql
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from core.roles import ROLES, roles_remember

# The token's age, its user and the user's roles, in one statement.
TOKEN_USER = (
    sql.SQL("""
SELECT t.created,
       ARRAY(
           SELECT g.name FROM {user_groups} ug JOIN {groups} g ON g.id = ug.group_id
           WHERE ug.user_id = u.id AND g.name = ANY(%(roles)s)
       ),
       u.*
FROM {tokens} t
JOIN {users} u ON u.id = t.user_id
WHERE t.key = %(key)s
""")
    .format(
        user_groups=sql.Identifier("auth_user_groups"),
        groups=sql.Identifier("auth_group"),
        tokens=sql.Identifier("authtoken_token"),
        users=sql.Identifier("auth_user"),
    )
    .as_string(None)
)


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, refusing tokens older than ``API_TOKEN_DAYS``.

    The token, its user and the user's roles come in one statement (:data:`TOKEN_USER`), so
    that a request's permission checks (``core.roles``) need no query of their own.
    """

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        with connection.cursor() as cursor:
            cursor.execute(TOKEN_USER, {"roles": list(ROLES), "key": key})
            row = cursor.fetchone()
            names = [column.name for column in cursor.description[2:]]
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        created, role_names, *values = row
        by_name = dict(zip(names, values, strict=True))
        attnames = [field.attname for field in User._meta.concrete_fields]
        user = User.from_db(DEFAULT_DB_ALIAS, attnames, [by_name[name] for name in attnames])
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        if created < timezone.now() - timedelta(days=settings.API_TOKEN_DAYS):
            raise exceptions.AuthenticationFailed(
                _("This token has expired: make a new one on your API token page.")
            )
        roles_remember(user, role_names)
        return user, Token(key=key, user=user, created=created)
