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

# The user's columns in the model's order, so that a row builds the user without reading the
# cursor's description, and the token's fields for the token.
_USER_FIELDS = User._meta.concrete_fields
USER_ATTNAMES = [field.attname for field in _USER_FIELDS]
TOKEN_ATTNAMES = [field.attname for field in Token._meta.concrete_fields]
ROLE_NAMES = list(ROLES)

# The token's age, its user and the user's roles, in one statement.
TOKEN_USER = (
    sql.SQL("""
SELECT t.created,
       ARRAY(
           SELECT g.name FROM {user_groups} ug JOIN {groups} g ON g.id = ug.group_id
           WHERE ug.user_id = u.id AND g.name = ANY(%(roles)s)
       ),
       {user_columns}
FROM {tokens} t
JOIN {users} u ON u.id = t.user_id
WHERE t.key = %(key)s
""")
    .format(
        user_columns=sql.SQL(", ").join(sql.Identifier("u", f.column) for f in _USER_FIELDS),
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
            cursor.execute(TOKEN_USER, {"roles": ROLE_NAMES, "key": key})
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        created, role_names, *values = row
        user = User.from_db(DEFAULT_DB_ALIAS, USER_ATTNAMES, values)
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        if created < timezone.now() - timedelta(days=settings.API_TOKEN_DAYS):
            raise exceptions.AuthenticationFailed(
                _("This token has expired: make a new one on your API token page.")
            )
        roles_remember(user, role_names)
        token = Token.from_db(DEFAULT_DB_ALIAS, TOKEN_ATTNAMES, [key, user.pk, created])
        token.user = user
        return user, token
