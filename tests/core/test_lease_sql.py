"""Tests for core.lease_sql: the lease rules, and the claim statement run against a throwaway
table of its own (the review and audit queues run it over their slots in their own tests)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection

from core import lease_sql
from core.lease_sql import OPEN_SINCE, LeaseTable

NOW = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
PROBE = LeaseTable(
    table="lease_probe", scope="queue", holder="holder_id", unit=("unit",), order=("-rank", "id")
)


def test_a_lease_ends_its_seconds_after_it_was_taken() -> None:
    """The expiry is the claim's time plus the lease's seconds."""
    assert lease_sql.lease_expiry(NOW, 90) == NOW + dt.timedelta(seconds=90)


@pytest.mark.parametrize(
    ("seconds", "valid"),
    [(29, False), (30, True), (7 * 24 * 3600, True), (7 * 24 * 3600 + 1, False)],
)
def test_a_lease_lasts_between_30_seconds_and_a_week(seconds: int, valid: bool) -> None:
    """Durations outside 30 s to a week are refused; the bounds themselves are allowed."""
    assert lease_sql.lease_seconds_valid(seconds) is valid


def test_the_claim_order_reads_django_style_terms() -> None:
    """A leading minus orders a column descending, under the alias given."""
    assert PROBE.order_sql("c") == "c.rank DESC, c.id"


def test_the_candidate_checks_its_gate_first_and_locks_without_waiting() -> None:
    """The gate leads the conditions (PostgreSQL checks it once before scanning) and the row
    is locked ``SKIP LOCKED``, so concurrent claims never wait on each other."""
    sql = lease_sql.candidate_sql(PROBE, where=("c.rank > 0",), gate="TRUE")
    where = sql.split("WHERE", 1)[1]
    assert where.strip().startswith("TRUE\n")
    assert "AND c.rank > 0" in where
    assert sql.rstrip().endswith("FOR UPDATE SKIP LOCKED\n        LIMIT 1")


# --- The statement against PostgreSQL --------------------------------------------------------


@pytest.fixture
def probe(db: None) -> None:
    """A lease table with the one-open-lease index every queue has, for this test only."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE lease_probe (id serial PRIMARY KEY, queue int NOT NULL, "
            "holder_id int, unit int NOT NULL, rank int NOT NULL, done boolean NOT NULL "
            "DEFAULT false, leased_at timestamptz, lease_expires_at timestamptz NOT NULL)"
        )
        cursor.execute(
            "CREATE UNIQUE INDEX ON lease_probe (queue, holder_id) "
            "WHERE NOT done AND holder_id IS NOT NULL"
        )


def _slots(*rows: tuple[int, int]) -> list[int]:
    """(unit, rank) open slots in queue 1; their ids."""
    ids = []
    with connection.cursor() as cursor:
        for unit, rank in rows:
            cursor.execute(
                "INSERT INTO lease_probe (queue, unit, rank, lease_expires_at) "
                "VALUES (1, %s, %s, %s) RETURNING id",
                [unit, rank, OPEN_SINCE],
            )
            ids.append(cursor.fetchone()[0])
    return ids


def _claim(holder: int, now: dt.datetime, sql: str | None = None, **params: Any) -> Any:
    statement = sql or lease_sql.claim_sql(PROBE, returning=("unit",))
    with connection.cursor() as cursor:
        cursor.execute(
            statement,
            {"scope": 1, "me": holder, "now": now, "lease_seconds": 60, **params},
        )
        return cursor.fetchone()


@pytest.mark.postgres
@pytest.mark.usefixtures("probe")
def test_a_claim_takes_the_first_slot_in_order_and_a_second_one_renews_it() -> None:
    """The highest rank is leased first; claiming again returns the same slot, resumed, with
    a later expiry, instead of taking another."""
    low, high = _slots((1, 0), (2, 5))
    first = _claim(7, NOW)
    assert first == (high, NOW + dt.timedelta(seconds=60), False, 2)
    again = _claim(7, NOW + dt.timedelta(seconds=30))
    assert again == (high, NOW + dt.timedelta(seconds=90), True, 2)
    assert _claim(8, NOW)[0] == low


@pytest.mark.postgres
@pytest.mark.usefixtures("probe")
def test_an_expired_lease_is_claimable_but_never_a_second_slot_of_the_holders_unit() -> None:
    """A lease past its expiry goes to the next claimant; a holder is never offered another
    slot of a unit they hold or filled, and with nothing else left gets no row."""
    taken, twin = _slots((1, 5), (1, 4))
    assert _claim(7, NOW)[0] == taken
    with connection.cursor() as cursor:
        cursor.execute("UPDATE lease_probe SET done = true WHERE id = %s", [taken])
    assert _claim(7, NOW) is None  # the twin is of the unit holder 7 filled
    assert _claim(8, NOW)[0] == twin
    later = NOW + dt.timedelta(seconds=61)
    assert _claim(9, later)[:3] == (twin, later + dt.timedelta(seconds=60), False)


@pytest.mark.postgres
@pytest.mark.usefixtures("probe")
def test_the_queue_narrows_candidates_and_reads_values_beside_the_lease() -> None:
    """``where`` filters the candidates; ``conf`` values come after the slot's columns, and
    the lease duration may be any SQL expression."""
    _low, high = _slots((1, 0), (2, 5))
    sql = lease_sql.claim_sql(
        PROBE,
        lease_seconds="%(minutes)s * 60",
        where=("c.rank < 5",),
        returning=("rank",),
        conf={"label": "'probe'"},
    )
    row = _claim(7, NOW, sql, minutes=2)
    assert row[0] != high
    assert row[1:] == (NOW + dt.timedelta(minutes=2), False, 0, "probe")


@pytest.mark.postgres
@pytest.mark.usefixtures("probe")
def test_a_claim_gated_by_its_conf_row_leases_nothing_without_it_and_answers_its_select() -> None:
    """With ``conf_from``, a holder whose conf row is missing (no right to the queue) neither
    takes a slot nor renews one held; ``then`` answers a select over the leased row."""
    held, free = _slots((1, 5), (2, 0))
    assert _claim(7, NOW)[0] == held
    sql = lease_sql.claim_sql(
        PROBE,
        returning=("unit",),
        conf={"allowed": "a.ok"},
        conf_from="FROM (SELECT %(me)s <> 9 AS ok) a WHERE a.ok",
        then="SELECT leased.id, leased.unit * 10, leased.resumed FROM leased",
    )
    assert _claim(9, NOW, sql) is None  # refused: nothing taken
    assert _claim(8, NOW, sql) == (free, 20, False)
    later = NOW + dt.timedelta(seconds=30)
    assert _claim(7, later, sql) == (held, 10, True)
    refusing_7 = sql.replace("%(me)s <> 9", "%(me)s <> 7")
    assert _claim(7, later + dt.timedelta(seconds=30), refusing_7) is None  # not renewed
    with connection.cursor() as cursor:
        cursor.execute("SELECT holder_id, lease_expires_at FROM lease_probe ORDER BY id")
        assert cursor.fetchall() == [
            (7, later + dt.timedelta(seconds=60)),
            (8, NOW + dt.timedelta(seconds=60)),
        ]
