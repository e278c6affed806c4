"""The SQL that picks the next claimable slot, shared by the site's claim and the benchmark.

Plain text and free of Django, so that ``bench/bench_review.py`` times the very subquery the
site runs (``review/services/claim_sql.py``) rather than a copy that could drift from it.
Parameters: ``%(ds)s`` the dataset, ``%(me)s`` the reviewer, ``%(now)s`` the claim's time.
"""

from __future__ import annotations


def claim_candidate(*, skipped: bool = False, gate: str = "") -> str:
    """The id of the next slot this reviewer may take, locked with ``SKIP LOCKED``.

    Claimable: not done, its lease expired (or never given), not a gold slot (those belong to
    the one reviewer they were made for), on a sample the reviewer holds no
    slot of in that review round, skipped or not as asked; in the order of the partial index
    ``slot_claim_order_idx``. ``gate`` is an extra leading condition (the site's "holds no
    lease yet", which PostgreSQL checks once before scanning).
    """
    skip_test = "EXISTS" if skipped else "NOT EXISTS"
    return f"""
        SELECT c.id FROM review_slot c
        WHERE {gate}
              c.dataset_id = %(ds)s AND NOT c.done AND c.lease_expires_at < %(now)s
          AND NOT c.gold
          AND NOT EXISTS (SELECT 1 FROM review_slot m
                          WHERE m.sample_id = c.sample_id AND m.round = c.round
                            AND m.reviewer_id = %(me)s)
          AND {skip_test} (SELECT 1 FROM review_skip k
                           WHERE k.sample_id = c.sample_id AND k.reviewer_id = %(me)s)
        ORDER BY c.judges_disagree DESC, c.priority DESC, c.sample_id, c.position
        FOR UPDATE SKIP LOCKED
        LIMIT 1"""  # noqa: S608 - gate and skip_test are constants of this module and claim_sql
