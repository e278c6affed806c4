"""The review bench's database side: reset the queue between phases, find an earlier run's
reviewers, and check the queue's invariants after a phase."""

from __future__ import annotations

from typing import Any

import psycopg


def reset_queue(db_url: str, dataset_id: int, k: int) -> None:
    """Every sample back to pending review with k open slots and no reviews (as built)."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        for sql in (
            "DELETE FROM review_review WHERE dataset_id = %(ds)s",
            "DELETE FROM review_outcome WHERE dataset_id = %(ds)s",
            "DELETE FROM review_skip WHERE dataset_id = %(ds)s",
            "DELETE FROM review_slot WHERE dataset_id = %(ds)s",
            "DELETE FROM annotation_samplerevision r USING annotation_sample s "
            "WHERE r.sample_id = s.id AND s.dataset_id = %(ds)s",
            "UPDATE annotation_sample SET status = 'pending_review', revision = 1, extra = '{}' "
            "WHERE dataset_id = %(ds)s AND (status <> 'pending_review' OR extra <> '{}')",
            "INSERT INTO review_slot (dataset_id, sample_id, round, position, judges_disagree, "
            "priority, lease_expires_at, done, gold) SELECT s.dataset_id, s.id, 0, p, "
            "s.judges_disagree, s.priority, '2000-01-01', false, false FROM annotation_sample s, "
            "generate_series(0, %(k)s - 1) p WHERE s.dataset_id = %(ds)s",
        ):
            conn.execute(sql, {"ds": dataset_id, "k": k})
        for table in ("review_slot", "review_review", "annotation_sample"):
            conn.execute(f"VACUUM ANALYZE {table}")


def load_built(db_url: str) -> dict[str, Any]:
    """An earlier run's dataset, tokens and bare reviewers (for --reuse)."""
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT id FROM annotation_dataset WHERE name = 'bench MMOOC'"
        ).fetchone()
        if row is None:
            raise SystemExit("--reuse: no earlier bench dataset in this database")
        tokens = conn.execute(
            "SELECT t.key FROM authtoken_token t JOIN auth_user u ON u.id = t.user_id "
            "WHERE u.username LIKE 'bench-%%' ORDER BY u.id"
        ).fetchall()
        bare = conn.execute(
            "SELECT id FROM auth_user WHERE username LIKE 'bare-%%' ORDER BY id"
        ).fetchall()
        slots = conn.execute("SELECT count(*) FROM review_slot").fetchone()
    return {
        "dataset_id": row[0],
        "tokens": [t for (t,) in tokens],
        "bare_ids": [b for (b,) in bare],
        "slots": slots[0] if slots else 0,
        "build_seconds": 0.0,
    }


def invariants(db_url: str, dataset_id: int, k: int) -> dict[str, int]:
    with psycopg.connect(db_url) as conn:
        over = conn.execute(
            "SELECT count(*) FROM (SELECT sample_id FROM review_review WHERE dataset_id = %s "
            "GROUP BY sample_id HAVING count(*) > %s) t",
            (dataset_id, k),
        ).fetchone()
        twice = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM review_review WHERE dataset_id = %s "
            "GROUP BY sample_id, reviewer_id HAVING count(*) > 1) t",
            (dataset_id,),
        ).fetchone()
        leases = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM review_slot WHERE dataset_id = %s "
            "AND NOT done AND reviewer_id IS NOT NULL GROUP BY reviewer_id "
            "HAVING count(*) > 1) t",
            (dataset_id,),
        ).fetchone()
    return {
        "over_reviewed_samples": over[0] if over else -1,
        "reviewed_twice": twice[0] if twice else -1,
        "reviewers_with_two_open_leases": leases[0] if leases else -1,
    }
