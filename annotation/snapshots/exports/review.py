"""The review trail of an exported sample, summarised from its history and other apps' notes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# History sources that mean a person looked at the labels (not an import or a status move).
_HUMAN_SOURCES = frozenset({"review", "adjudication", "edit"})


@dataclass(frozen=True)
class RevisionInfo:
    number: int
    source: str
    changed_by: str
    changed_at: str


def review_trail(
    revisions: Iterable[RevisionInfo], review_summary: Any = None, judge_votes: Any = None
) -> dict[str, Any]:
    """Reviewers, agreement, adjudication and judge votes of one sample, as plain JSON.

    ``review_summary`` (written by the review app) and ``judge_votes`` (written by judging) are
    passed through as they are; reviewers and adjudication also come from the history, so a
    sample reviewed before those notes existed still shows who touched it.
    """
    history = sorted(revisions, key=lambda r: r.number)
    summary = review_summary if isinstance(review_summary, dict) else {}
    people = sorted({r.changed_by for r in history if r.changed_by and r.source in _HUMAN_SOURCES})
    reviewers = summary.get("reviewers")
    if not isinstance(reviewers, list):
        reviewers = people
    adjudicated = bool(summary.get("adjudicated")) or any(
        r.source == "adjudication" for r in history
    )
    return {
        "reviewers": reviewers,
        "agreement": summary.get("agreement"),
        "adjudicated": adjudicated,
        "judge_votes": judge_votes,
        "review_summary": review_summary,
        "changed_by": people,
        "changes": dict(sorted(Counter(r.source for r in history).items())),
        "revisions": len(history),
        "last_changed_at": history[-1].changed_at if history else None,
    }
