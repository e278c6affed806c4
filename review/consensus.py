"""What a reviewer may change on a sample, checks of their values, and the consensus of k reviews.

Plain Python with no Django import, so the rules can be tested and reasoned about alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

IMAGE_QUESTION_FIELDS: tuple[str, ...] = (
    "answerability_group",
    "category_code",
    "scenario",
    "reference_answer",
    "explanation",
)
TRIMODAL_FIELDS: tuple[str, ...] = ("safety_label", "predicate")
SAFETY_LABELS = frozenset({"safe", "unsafe"})
ACCEPT, REJECT = "accept", "reject"
VERIFIED, REJECTED, NEEDS_ADJUDICATION = "verified", "rejected", "needs_adjudication"


def reviewable_fields(kind: str) -> tuple[str, ...]:
    """The label fields a reviewer confirms or corrects for a dataset kind."""
    return TRIMODAL_FIELDS if kind == "trimodal" else IMAGE_QUESTION_FIELDS


@dataclass(frozen=True)
class Problem:
    """A value a reviewer may not submit: the field and a code that the caller words."""

    field: str
    code: str
    value: str = ""


def normalise_values(kind: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The reviewable fields only, with text stripped and predicate conditions cleaned."""
    clean: dict[str, Any] = {}
    for name in reviewable_fields(kind):
        if name not in values:
            continue
        value = values[name]
        if name == "predicate":
            items = value if isinstance(value, list) else []
            clean[name] = [str(item).strip() for item in items if str(item).strip()]
        else:
            clean[name] = "" if value is None else str(value).strip()
    return clean


def check_values(
    kind: str,
    values: Mapping[str, Any],
    *,
    groups: set[str],
    categories: Mapping[str, str],
    scenarios: set[str],
) -> list[Problem]:
    """Problems of normalised values against the dataset's taxonomy (empty sets allow all)."""
    problems = [
        Problem(field=name, code="unknown_field", value=name)
        for name in values
        if name not in reviewable_fields(kind)
    ]
    group = values.get("answerability_group")
    if group and groups and group not in groups:
        problems.append(Problem("answerability_group", "unknown_group", group))
    category = values.get("category_code")
    if category and categories:
        if category not in categories:
            problems.append(Problem("category_code", "unknown_category", category))
        elif group and categories[category] and categories[category] != group:
            problems.append(Problem("category_code", "category_not_in_group", category))
    scenario = values.get("scenario")
    if scenario and scenarios and scenario not in scenarios:
        problems.append(Problem("scenario", "unknown_scenario", scenario))
    label = values.get("safety_label")
    if "safety_label" in values and label not in SAFETY_LABELS:
        problems.append(Problem("safety_label", "unknown_safety_label", str(label)))
    if "predicate" in values and not values["predicate"]:
        problems.append(Problem("predicate", "empty_predicate"))
    return problems


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
    """Verified with the agreed values when every reviewer accepts the same values; rejected
    when every reviewer rejects (whatever their reasons); otherwise adjudication is needed.
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


def changed_values(current: Mapping[str, Any], proposed: Mapping[str, Any]) -> dict[str, Any]:
    """The proposed values that differ from the current ones."""
    return {k: v for k, v in proposed.items() if current.get(k) != v}
