"""Answerability consensus: does every judge agree with a sample's own label?

MMOOC keeps a sample only when all of its judges independently agree on its answerability; a
sample on which any judge disagrees, or gave no vote, is flagged for human review.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

ANSWERABLE = "answerable"
UNANSWERABLE = "unanswerable"


@dataclass(frozen=True)
class Vote:
    """One verdict of one judge (a repeat); label None when the judge ended in an error."""

    judge: str
    label: str | None
    category: str | None = None


@dataclass(frozen=True)
class Consensus:
    """The per-judge votes of a sample and whether they all agree with its label."""

    agree: bool
    votes: list[dict[str, str | None]]


def judge_label(votes: Sequence[Vote]) -> tuple[str | None, str | None]:
    """A judge's label over its repeats: the strict majority, else None (no clear vote)."""
    labels = Counter(v.label for v in votes if v.label is not None)
    if not labels:
        return None, None
    (top, count), *rest = labels.most_common()
    if rest and rest[0][1] == count:
        return None, None
    categories = Counter(v.category for v in votes if v.label == top and v.category)
    category = categories.most_common(1)[0][0] if categories else None
    return top, category


def consensus(sample_label: str, votes: Iterable[Vote], judges: Sequence[str]) -> Consensus:
    """Agree when every judge in `judges` has a clear vote equal to `sample_label`."""
    by_judge: dict[str, list[Vote]] = {name: [] for name in judges}
    for vote in votes:
        by_judge.setdefault(vote.judge, []).append(vote)
    summary: list[dict[str, str | None]] = []
    agree = True
    for name in judges:
        label, category = judge_label(by_judge[name])
        summary.append({"judge": name, "label": label, "category": category})
        if label != sample_label:
            agree = False
    return Consensus(agree=agree, votes=summary)


def sample_answerability(group: str, reference_is_refusal: bool) -> str:
    """The label a sample claims: out-of-context (or a refusal reference) is unanswerable."""
    return UNANSWERABLE if group == "ooc" or reference_is_refusal else ANSWERABLE


def consensus_all(
    sample_labels: Mapping[int, str], votes: Mapping[int, list[Vote]], judges: Sequence[str]
) -> dict[int, Consensus]:
    """Consensus of every sample in `sample_labels`."""
    return {
        sample_id: consensus(label, votes.get(sample_id, []), judges)
        for sample_id, label in sample_labels.items()
    }
