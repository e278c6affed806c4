"""A cursor for the review loop's fixed statements: bound and prepared by PostgreSQL.

Django's psycopg 3 cursors bind parameters on the client: each statement goes out as text with
its values quoted into it, and PostgreSQL parses and plans it anew every time. The hot path's
statements (the token, the claim, the slot lock, the review and settlement writes) are fixed
text run many times a second, and planning them was about half of PostgreSQL's time on the
review loop (``pg_stat_statements``, docs/performance.md). Through :func:`hot_cursor` they are
sent with server-side binding and prepared once per connection instead.

That pays only where a connection outlives a request: with ``CONN_MAX_AGE=0`` every request
opens a new connection, and preparing would add a round trip to each statement. So
``PREPARE_HOT_STATEMENTS`` defaults to on when connections persist; turn it off behind a
connection pooler in transaction mode that does not keep prepared statements (PgBouncer before
1.21). Elsewhere (SQLite, the setting off) :func:`hot_cursor` is the connection's own cursor.

The cursor is wrapped as Django wraps its own, so query logging and
``django_assert_num_queries`` see its statements.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections


def prepares() -> bool:
    """Whether the hot path's statements are prepared on this connection."""
    return connections[DEFAULT_DB_ALIAS].vendor == "postgresql" and _enabled()


def hot_cursor() -> Any:
    """A cursor whose statements PostgreSQL binds and prepares (the connection's own cursor
    where it does not), to use as ``with hot_cursor() as cursor:``."""
    db = connections[DEFAULT_DB_ALIAS]  # once: each ``connection.x`` looks the wrapper up
    if db.vendor != "postgresql" or not _enabled():
        return db.cursor()
    # As Django's ``connection.cursor()``, with another cursor class.
    db.close_if_health_check_failed()
    db.ensure_connection()
    with db.wrap_database_errors:
        cursor = _cursor_class()(db.connection)
        timestamptz, text, register_tzloader = _timezone_parts()
        if db.timezone != db.connection.adapters.get_loader(timestamptz, text).timezone:
            register_tzloader(db.timezone, cursor)  # as Django's ``create_cursor`` does
        # Django's own wrapping (logging, execute wrappers, error translation) of its cursors.
        return db._prepare_cursor(cursor)  # type: ignore[attr-defined]


def _enabled() -> bool:
    return bool(settings.PREPARE_HOT_STATEMENTS)


@cache
def _timezone_parts() -> tuple[int, Any, Any]:
    """What comparing and setting a cursor's time zone takes (psycopg only on PostgreSQL)."""
    from django.db.backends.postgresql.base import TIMESTAMPTZ_OID  # type: ignore[attr-defined]
    from django.db.backends.postgresql.psycopg_any import (  # type: ignore[import-untyped]
        register_tzloader,
    )
    from psycopg.pq import Format

    return TIMESTAMPTZ_OID, Format.TEXT, register_tzloader


@cache
def _cursor_class() -> type:
    from django.db.backends.postgresql.base import (  # type: ignore[attr-defined]
        ServerBindingCursor,
    )

    class PreparingCursor(ServerBindingCursor):  # type: ignore[misc]
        """Django's server-side binding cursor, preparing every statement it runs."""

        def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
            options.setdefault("prepare", True)
            return super().execute(query, params, **options)

        def _send_query_prepared(self, name: bytes, pgq: Any, **options: Any) -> None:
            # psycopg notes the query sent only when it is not prepared; Django's query log
            # (and so django_assert_num_queries' listing) reads it from there.
            self._query = pgq
            super()._send_query_prepared(name, pgq, **options)

    return PreparingCursor
