"""The hot path's cursor (core/prepared.py): PostgreSQL binds and prepares its statements once
per connection, where connections persist; elsewhere it is the connection's own cursor."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction

from core.prepared import hot_cursor, prepares

pytestmark = pytest.mark.django_db

PROBE = "SELECT %s::int + 1, 'prepared probe'"


def _prepared_probes() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%prepared probe%"],
        )
        return int(cursor.fetchone()[0])


@pytest.mark.postgres
def test_a_hot_statement_is_prepared_once_and_reused(django_assert_num_queries: Any) -> None:
    """The same statement run three times is prepared once on the connection and answers
    each time with its own values; Django's query log counts every run."""
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    assert prepares()
    before = _prepared_probes()
    with django_assert_num_queries(3) as queries:
        for value in (5, 6, 7):
            with hot_cursor() as cursor:
                cursor.execute(PROBE, [value])
                assert cursor.fetchone()[0] == value + 1
    assert _prepared_probes() == before + 1
    assert all("prepared probe" in query["sql"] for query in queries.captured_queries)


@pytest.mark.postgres
def test_with_the_setting_off_statements_go_as_django_sends_them(settings: Any) -> None:
    """PREPARE_HOT_STATEMENTS off (a pooler that drops prepared statements): the cursor is
    Django's own, which binds on the client and prepares nothing."""
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    settings.PREPARE_HOT_STATEMENTS = False
    before = _prepared_probes()
    with hot_cursor() as cursor:
        for value in (1, 2):
            cursor.execute(PROBE, [value])
            assert cursor.fetchone()[0] == value + 1
    assert not prepares()
    assert _prepared_probes() == before


def test_a_failed_statement_leaves_the_connection_usable() -> None:
    """A statement that fails raises Django's own error class, and the next one runs."""
    with pytest.raises(DatabaseError), transaction.atomic(), hot_cursor() as cursor:
        cursor.execute("SELECT %s FROM no_such_table", [1])
    with hot_cursor() as cursor:
        cursor.execute("SELECT %s", [7])
        assert cursor.fetchone()[0] == 7


def test_the_setting_follows_persistent_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    """By default statements are prepared only where connections outlive a request."""
    import importlib

    import mmooc_site.settings as site_settings

    for age, expected in (("0", False), ("600", True)):
        monkeypatch.setenv("CONN_MAX_AGE", age)
        monkeypatch.delenv("PREPARE_HOT_STATEMENTS", raising=False)
        assert importlib.reload(site_settings).PREPARE_HOT_STATEMENTS is expected
    monkeypatch.setenv("PREPARE_HOT_STATEMENTS", "0")
    assert importlib.reload(site_settings).PREPARE_HOT_STATEMENTS is False
    monkeypatch.undo()
    importlib.reload(site_settings)
