"""Fixtures of the review tests."""

from __future__ import annotations

import pytest
from django.db import connection

from review.queue import services as queue
from review.services import submit_sql


@pytest.fixture(params=["statement", "orm"])
def claim_way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a claim test both ways: PostgreSQL's one statement (``claim_sql``), and the ORM
    transaction that SQLite uses, and PostgreSQL too when one sample is asked for."""
    way: str = request.param
    if way == "statement" and connection.vendor != "postgresql":
        pytest.skip("the one-statement claim is PostgreSQL's")
    if way == "orm":
        monkeypatch.setattr(queue, "claim_statement_applies", lambda *, sample_id: False)
    return way


@pytest.fixture(params=["statement", "orm"])
def submit_way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a submission test both ways: PostgreSQL's one statement for the review's writes
    and one for the settlement's (``submit_sql``), and the ORM steps that SQLite uses."""
    way: str = request.param
    if way == "statement" and connection.vendor != "postgresql":
        pytest.skip("the one-statement submission is PostgreSQL's")
    if way == "orm":
        monkeypatch.setattr(submit_sql, "ENABLED", False)
    return way
