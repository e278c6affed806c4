"""What a reviewer may change on a sample, and the checks of the values they submit.

Plain Python with no Django import, so the rules can be tested and reasoned about alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from typing import Any

IMAGE_QUESTION_FIELDS: tuple[str, ...] = (
    "answerability_group",
    "category_code",
    "scenario",
    "reference_answer",
    "explanation",
)
TRIMODAL_FIELDS: tuple[str, ...] = (
    "safety_label",
    "safety_category",
    "safety_subcategory",
    "predicate",
)
SAFETY_LABELS = frozenset({"safe", "unsafe"})
# Every field a reviewer may change on a sample of some kind.
ALL_FIELDS: tuple[str, ...] = (*IMAGE_QUESTION_FIELDS, *TRIMODAL_FIELDS)


def reviewable_fields(kind: str) -> tuple[str, ...]:
    """The label fields a reviewer confirms or corrects for a dataset kind."""
    return TRIMODAL_FIELDS if kind == "trimodal" else IMAGE_QUESTION_FIELDS


@dataclass(frozen=True)
class Problem:
    """A value a reviewer may not submit: the field and a code that the caller words."""

    field: str
    code: str
    value: str = ""


@dataclass(frozen=True)
class Taxonomy:
    """The codes a dataset allows; an empty set or mapping leaves that field free."""

    groups: Set[str] = frozenset()
    categories: Mapping[str, str] = field(default_factory=dict)  # code -> group code
    scenarios: Set[str] = frozenset()
    safety_categories: Mapping[str, Set[str]] = field(default_factory=dict)  # -> subcategories


def malformed_values(kind: str, values: Mapping[str, Any]) -> list[Problem]:
    """Values of the wrong type: every field is text, the predicate a list of texts (or one
    text, a condition per line)."""
    problems: list[Problem] = []
    for name in reviewable_fields(kind):
        if name not in values:
            continue
        value = values[name]
        if name == "predicate" and isinstance(value, list):
            if all(isinstance(item, str) for item in value):
                continue
        elif isinstance(value, str):
            continue
        problems.append(Problem(name, "not_text", name))
    return problems


def missing_required(kind: str, after: Mapping[str, Any], taxonomy: Taxonomy) -> list[Problem]:
    """The fields a verified sample must have, empty in ``after``: its answerability group and
    category when the dataset's taxonomy has them; a tri-modal scenario's safety label, and
    its safety category when the taxonomy has those."""
    if kind == "trimodal":
        wanted = ["safety_label"] + (["safety_category"] if taxonomy.safety_categories else [])
    else:
        wanted = (["answerability_group"] if taxonomy.groups else []) + (
            ["category_code"] if taxonomy.categories else []
        )
    return [
        Problem(name, "required", name) for name in wanted if not str(after.get(name) or "").strip()
    ]


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


def edits(kind: str, current: Mapping[str, Any], proposed: Mapping[str, Any]) -> dict[str, Any]:
    """What a reviewer changed: the proposed values (normalised) that differ from the
    sample's current ones (normalised alike). A field left out, or sent back as it stands,
    is no edit, so confirming a sample never rewrites a label.
    """
    now = normalise_values(kind, current)
    return {k: v for k, v in normalise_values(kind, proposed).items() if now.get(k) != v}


def check_values(
    kind: str, changes: Mapping[str, Any], *, current: Mapping[str, Any], taxonomy: Taxonomy
) -> list[Problem]:
    """Problems of a reviewer's edits against the dataset's taxonomy.

    Only the edited fields are checked, each as the sample will hold it after the edit: a
    value the reviewer left alone is kept even when it is not (or no longer) a term.
    """
    problems = [
        Problem(field=name, code="unknown_field", value=name)
        for name in changes
        if name not in reviewable_fields(kind)
    ]
    after = {**current, **changes}
    problems += _check_group_category(changes, after, taxonomy)
    scenario = changes.get("scenario")
    if scenario and taxonomy.scenarios and scenario not in taxonomy.scenarios:
        problems.append(Problem("scenario", "unknown_scenario", scenario))
    problems += _check_safety(changes, after, taxonomy)
    return problems


def _check_group_category(
    changes: Mapping[str, Any], after: Mapping[str, Any], taxonomy: Taxonomy
) -> list[Problem]:
    problems: list[Problem] = []
    group = after.get("answerability_group") or ""
    groups = taxonomy.groups
    if "answerability_group" in changes and group and groups and group not in groups:
        problems.append(Problem("answerability_group", "unknown_group", group))
    category = after.get("category_code") or ""
    if not category or not taxonomy.categories:
        return problems
    if "category_code" in changes and category not in taxonomy.categories:
        problems.append(Problem("category_code", "unknown_category", category))
    elif (
        ("category_code" in changes or "answerability_group" in changes)
        and group
        and taxonomy.categories.get(category)
        and taxonomy.categories[category] != group
    ):
        problems.append(Problem("category_code", "category_not_in_group", category))
    return problems


def _check_safety(
    changes: Mapping[str, Any], after: Mapping[str, Any], taxonomy: Taxonomy
) -> list[Problem]:
    problems: list[Problem] = []
    if "safety_label" in changes and changes["safety_label"] not in SAFETY_LABELS:
        problems.append(Problem("safety_label", "unknown_safety_label", changes["safety_label"]))
    category = after.get("safety_category") or ""
    known = taxonomy.safety_categories
    if "safety_category" in changes and category and known and category not in known:
        problems.append(Problem("safety_category", "unknown_safety_category", category))
    subcategory = after.get("safety_subcategory") or ""
    allowed = taxonomy.safety_categories.get(category) or set()
    if (
        ("safety_subcategory" in changes or "safety_category" in changes)
        and subcategory
        and allowed
        and subcategory not in allowed
    ):
        problems.append(Problem("safety_subcategory", "unknown_safety_subcategory", subcategory))
    # Conditions are what make a scenario unsafe: an unsafe one cannot lose them all. A
    # scenario that never had any needs none to change its label.
    if (
        "predicate" in changes
        and not changes["predicate"]
        and after.get("safety_label") == "unsafe"
    ):
        problems.append(Problem("predicate", "empty_predicate"))
    return problems
