"""Answerability consensus: does every judge agree with a sample's own label?

MMOOC keeps a sample only when all of its judges independently agree on its answerability; a
sample on which any judge disagrees, or gave no vote (an error), is flagged for human review.

A judge may abstain (the offline rule judge always does on answerability: it cannot see the
image). An abstention is neither a vote nor agreement: the judge is left out of the sample's
consensus, and a sample on which every judge abstained is undecided, neither agreed nor flagged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from judging.extraction import is_refusal_reference

ANSWERABLE = "answerable"
UNANSWERABLE = "unanswerable"
ABSTAIN = "abstain"


@dataclass(frozen=True)
class Vote:
    """One verdict of one judge (a repeat); label None when the judge ended in an error,
    ABSTAIN when it declined to decide."""

    judge: str
    label: str | None
    category: str | None = None


@dataclass(frozen=True)
class Consensus:
    """The per-judge votes of a sample and whether they all agree with its label.

    ``agree``: at least one judge voted and every judge that did not abstain voted the label.
    ``disagree``: some judge that did not abstain voted otherwise or has no vote.
    Neither: every judge abstained (undecided).
    """

    agree: bool
    votes: list[dict[str, str | None]]
    disagree: bool = False

    @property
    def undecided(self) -> bool:
        return not self.agree and not self.disagree


def judge_label(votes: Sequence[Vote]) -> tuple[str | None, str | None]:
    """A judge's label over its repeats: the strict majority of its real votes, else None (no
    clear vote); ABSTAIN when all it gave were abstentions."""
    labels = Counter(v.label for v in votes if v.label is not None and v.label != ABSTAIN)
    if not labels:
        if votes and all(v.label == ABSTAIN for v in votes):
            return ABSTAIN, None
        return None, None
    (top, count), *rest = labels.most_common()
    if rest and rest[0][1] == count:
        return None, None
    categories = Counter(v.category for v in votes if v.label == top and v.category)
    category = categories.most_common(1)[0][0] if categories else None
    return top, category


def consensus(sample_label: str, votes: Iterable[Vote], judges: Sequence[str]) -> Consensus:
    """Agree when every judge in `judges` that did not abstain (at least one) has a clear vote
    equal to `sample_label`."""
    by_judge: dict[str, list[Vote]] = {name: [] for name in judges}
    for vote in votes:
        by_judge.setdefault(vote.judge, []).append(vote)
    summary: list[dict[str, str | None]] = []
    voted = disagree = False
    for name in judges:
        label, category = judge_label(by_judge[name])
        summary.append({"judge": name, "label": label, "category": category})
        if label == ABSTAIN:
            continue
        voted = True
        if label != sample_label:
            disagree = True
    return Consensus(agree=voted and not disagree, votes=summary, disagree=disagree)


OOC_GROUP = "ooc"
SHIFTED_IC_GROUP = "shifted_ic"


@dataclass(frozen=True)
class Answerability:
    """A sample's answerability: its group, and whether the group was inferred from the
    reference answer because the sample's data gives none."""

    group: str
    inferred: bool

    @property
    def label(self) -> str:
        return UNANSWERABLE if self.group == OOC_GROUP else ANSWERABLE


def sample_answerability(group: str, reference: str | None) -> Answerability:
    """The sample's own group when it has one; only without one is it inferred from the text
    (a reference answer that is itself a refusal is out-of-context).

    A group is the data's word: an answerable sample whose reference merely quotes a refusal
    ("I don't know how to ...") stays answerable.
    """
    if group:
        return Answerability(group, inferred=False)
    inferred = OOC_GROUP if is_refusal_reference(reference) else SHIFTED_IC_GROUP
    return Answerability(inferred, inferred=True)


def consensus_all(
    sample_labels: Mapping[int, str], votes: Mapping[int, list[Vote]], judges: Sequence[str]
) -> dict[int, Consensus]:
    """Consensus of every sample in `sample_labels`."""
    return {
        sample_id: consensus(label, votes.get(sample_id, []), judges)
        for sample_id, label in sample_labels.items()
    }
