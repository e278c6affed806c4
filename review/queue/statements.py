"""The review queue's slots as a lease table, and the SQL that picks the next claimable slot.

Plain text and free of Django, so that ``bench/bench_review.py`` times the very subquery the
site runs (``review/queue/claim_sql.py``) rather than a copy that could drift from it; the
statements are built by ``core.lease_sql``, which the audit rating queue shares.
Parameters: ``%(scope)s`` the dataset, ``%(me)s`` the reviewer, ``%(now)s`` the claim's time.
"""

from __future__ import annotations

from core.lease_sql import LeaseTable, candidate_sql

# In the order of the partial index ``slot_claim_order_idx``; a reviewer holds one slot of a
# sample in a review round.
SLOTS = LeaseTable(
    table="review_slot",
    scope="dataset_id",
    holder="reviewer_id",
    unit=("sample_id", "round"),
    order=("-judges_disagree", "-priority", "sample_id", "position"),
)


def claimable_where(*, skipped: bool = False) -> tuple[str, ...]:
    """The review queue's own conditions on a candidate slot ``c``: not a gold slot (those
    belong to the one reviewer they were made for), and skipped by the reviewer or not, as
    asked."""
    skip = "SELECT 1 FROM review_skip k WHERE k.sample_id = c.sample_id AND k.reviewer_id = %(me)s"
    return ("NOT c.gold", f"EXISTS ({skip})" if skipped else f"NOT EXISTS ({skip})")


def claim_candidate(*, skipped: bool = False) -> str:
    """The id of the next slot this reviewer may take, locked with ``SKIP LOCKED``: not done,
    its lease expired (or never given), on a sample the reviewer holds no slot of in that
    review round, and ``claimable_where``."""
    return candidate_sql(SLOTS, where=claimable_where(skipped=skipped))
