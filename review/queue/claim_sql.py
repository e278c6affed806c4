"""The claim as one PostgreSQL statement: renew the reviewer's lease, or lease the next slot.

``queue._claim_once`` does the same through the ORM in five statements inside a transaction;
on PostgreSQL the plain "next" and "skipped" claims run this single statement instead, in one
round trip and without a transaction of their own (a statement is atomic). The statement is
``core.lease_sql.claim_sql`` (shared with the audit rating queue) over the review slots, with
the queue's own candidate conditions (``review.queue.statements``, whose candidate subquery
``bench/bench_review.py`` measures as the bare-SQL ceiling) and two values read once beside
the lease: the dataset's lease duration and its gold rate.

How it keeps the queue's rules:
- The reviewer's unfinished slot in the dataset, if any, is renewed; a new slot is looked for
  only when there is none, so a reload or a double click never takes a second sample.
- Two concurrent claims by the same reviewer both find no held slot; the second to write trips
  the partial unique index ``uniq_open_lease`` and raises IntegrityError, which the caller
  retries: the retry finds the first claim's lease.
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from typing import Any, NamedTuple

from annotation import hot_selectors
from annotation import selectors as annotation_selectors
from core.lease_sql import claim_sql
from core.leases import claim_by_statement
from review.editing import IMAGE_QUESTION_FIELDS, TRIMODAL_FIELDS
from review.queue.statements import SLOTS, claimable_where

# What a claim answers of its sample, for every kind of dataset (the caller keeps its kind's).
CARD_FIELDS = ("external_id", "status", "question", *IMAGE_QUESTION_FIELDS, *TRIMODAL_FIELDS)


class ClaimRow(NamedTuple):
    slot_id: int
    sample_id: int
    expires_at: dt.datetime
    resumed: bool
    gold: bool
    gold_rate: float


_LEASE_SECONDS = """COALESCE(
        (SELECT lease_seconds FROM review_reviewsettings WHERE dataset_id = %(scope)s),
        %(default_lease)s
    )"""
# 0 when the dataset has no gold item: a claim then never looks for one.
_GOLD_RATE = """CASE WHEN EXISTS (SELECT 1 FROM review_golditem g WHERE g.dataset_id = %(scope)s)
        THEN COALESCE(
            (SELECT gold_rate FROM review_reviewsettings WHERE dataset_id = %(scope)s),
            %(default_gold_rate)s
        )
        ELSE 0
    END"""


def _claim(*, skipped: bool, member: str | None = None) -> str:
    """The claim statement; with ``member``, as :func:`claim_card_sql` describes it."""
    conf, card = {"gold_rate": _GOLD_RATE}, {}
    if member is not None:
        conf["kind"] = "d.kind"
        card = {
            "conf_from": hot_selectors.visible_dataset_from(
                dataset_param="%(scope)s", member=member
            ),
            "then": (
                f"SELECT leased.*, {hot_selectors.card_select(fields=CARD_FIELDS, sample='s')} "  # noqa: S608 - model tables
                f"FROM leased JOIN {annotation_selectors.sample_table()} s "
                "ON s.id = leased.sample_id"
            ),
        }
    return claim_sql(
        SLOTS,
        lease_seconds=_LEASE_SECONDS,
        where=claimable_where(skipped=skipped),
        returning=("sample_id", "gold"),
        conf=conf,
        **card,
    )


CLAIM_NEXT = _claim(skipped=False)
CLAIM_SKIPPED = _claim(skipped=True)


@cache
def claim_card_sql(*, skipped: bool, member: str) -> str:
    """The claim with its dataset's visibility test and its sample's card in one statement:
    nothing is leased in a dataset the reviewer may not work in (``member``, the test of
    ``annotation.hot_selectors.member_test`` over ``d`` with ``%(me)s``), and the row answers
    the dataset's kind and the leased sample's ``CARD_FIELDS`` and media after the lease."""
    return _claim(skipped=skipped, member=member)


def _params(
    dataset_id: int,
    reviewer_id: int,
    now: dt.datetime,
    default_lease_seconds: int,
    default_gold_rate: float,
) -> dict[str, Any]:
    return {
        "scope": dataset_id,
        "me": reviewer_id,
        "now": now,
        "default_lease": default_lease_seconds,
        "default_gold_rate": default_gold_rate,
    }


def _claim_row(row: Any) -> ClaimRow:
    slot_id, expires_at, resumed, sample_id, gold, gold_rate = row
    return ClaimRow(
        int(slot_id), int(sample_id), expires_at, bool(resumed), bool(gold), float(gold_rate)
    )


class CardClaim(NamedTuple):
    claim: ClaimRow
    kind: str
    card: dict[str, Any]
    media: list[dict[str, Any]]


def claim_card_statement(
    *,
    dataset_id: int,
    reviewer_id: int,
    member: str,
    skipped: bool,
    now: dt.datetime,
    default_lease_seconds: int,
    default_gold_rate: float,
) -> CardClaim | None:
    """Run :func:`claim_card_sql`: the lease with the dataset's kind and the sample's card, or
    None when nothing was leased (nothing left, or a dataset the reviewer may not work in).
    Raises IntegrityError as :func:`claim_statement` does."""
    params = _params(dataset_id, reviewer_id, now, default_lease_seconds, default_gold_rate)
    row = claim_by_statement(claim_card_sql(skipped=skipped, member=member), params)
    if row is None:
        return None
    card, media = hot_selectors.card_values(fields=CARD_FIELDS, row=row[7:])
    return CardClaim(_claim_row(row[:6]), str(row[6]), card, media)


def claim_statement(
    *,
    dataset_id: int,
    reviewer_id: int,
    skipped: bool,
    now: dt.datetime,
    default_lease_seconds: int,
    default_gold_rate: float,
) -> ClaimRow | None:
    """Run the claim; the slot leased (with the dataset's gold rate, read in the same
    statement so that a claim with gold off costs nothing more) or None when nothing is left.

    Raises IntegrityError when a concurrent claim by the same reviewer won the one-open-lease
    constraint (inside a savepoint when the caller is in a transaction, so it can retry).
    """
    params = _params(dataset_id, reviewer_id, now, default_lease_seconds, default_gold_rate)
    row = claim_by_statement(CLAIM_SKIPPED if skipped else CLAIM_NEXT, params)
    return None if row is None else _claim_row(row)
