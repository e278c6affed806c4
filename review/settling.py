"""How k reviews of a sample settle it: verified, rejected or sent to adjudication.

Plain Python with no Django import, so the rule can be tested and reasoned about alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ACCEPT, REJECT = "accept", "reject"
VERIFIED, REJECTED, NEEDS_ADJUDICATION = "verified", "rejected", "needs_adjudication"


@dataclass(frozen=True)
class Verdict:
    """A submitted review, as consensus sees it."""

    reviewer: str
    decision: str
    values: Mapping[str, Any]
    reject_reason: str = ""


@dataclass(frozen=True)
class Consensus:
    status: str
    agreement: bool
    values: dict[str, Any]
    reject_reasons: tuple[str, ...] = ()


def consensus(verdicts: Sequence[Verdict]) -> Consensus:
    """Verified with the agreed edits when every reviewer accepts with the same edits;
    rejected when every reviewer rejects (whatever their reasons); otherwise adjudication.

    A verdict's values are the reviewer's edits (see ``edits``), so two untouched accepts
    agree (no edit, nothing to write) while an untouched accept and an accept that corrects
    a field disagree.
    """
    if not verdicts:
        raise ValueError("consensus needs at least one verdict")
    decisions = {v.decision for v in verdicts}
    if decisions == {REJECT}:
        reasons = Counter(v.reject_reason for v in verdicts if v.reject_reason)
        return Consensus(REJECTED, True, {}, tuple(r for r, _n in reasons.most_common()))
    if decisions == {ACCEPT}:
        first = dict(verdicts[0].values)
        if all(dict(v.values) == first for v in verdicts[1:]):
            return Consensus(VERIFIED, True, first)
    return Consensus(NEEDS_ADJUDICATION, False, {})
