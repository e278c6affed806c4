"""The audit planner's preview: the margins of every allocation and the warnings of a design,
from the stored strata of the sampling frame (never the frame itself, which a worker counts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.models import Dataset
from core.computations import Stored
from judging.audit import computations
from judging.models import AllocationMethod
from judging.stats.sampling import compare_allocations

# Above this many strata the planner lists only the largest ones.
PLANNER_STRATA_SHOWN = 30
EXAMPLES = 3


@dataclass
class Plan:
    """What the preview shows; ``counting`` while the frame's strata have never been counted,
    or while a worker recounts a frame last counted empty (say, just after the first judge job
    ended): "no judged items yet" would then be wrong."""

    stored: Stored
    frame_size: int = 0
    strata: int = 0
    rare: int = 0
    disagree: int = 0
    choices: list[dict[str, Any]] = field(default_factory=list)
    # (stratum, size, its allocation under each method, in the order of ``choices``)
    strata_rows: list[tuple[str, int, list[int]]] = field(default_factory=list)
    allocations: dict[str, dict[str, int]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def counting(self) -> bool:
        if self.stored.result is None:
            return True
        return self.stored.computing and not self.stored.result.get("frame_size")

    @property
    def empty(self) -> bool:
        return not self.counting and not self.frame_size


def design_warnings(
    sizes: dict[str, int], allocation: dict[str, int], *, n: int, floor: int
) -> list[str]:
    """Warn when N exceeds the frame, or when strata get fewer items than the minimum: those
    smaller than the minimum (taken whole), and those whose minimum N is too small to give."""
    warnings: list[str] = []
    population = sum(sizes.values())
    if n > population:
        warnings.append(
            _(
                "N = %(n)s exceeds the %(population)s judged items of this task: every item "
                "would be drawn."
            )
            % {"n": n, "population": population}
        )
    small = sorted(key for key, size in sizes.items() if size < floor)
    if small:
        warnings.append(
            ngettext(
                "%(count)s stratum holds fewer items than the minimum of %(floor)s and is "
                "taken whole: %(examples)s.",
                "%(count)s strata hold fewer items than the minimum of %(floor)s and are "
                "taken whole, for example %(examples)s.",
                len(small),
            )
            % {"count": len(small), "floor": floor, "examples": ", ".join(small[:EXAMPLES])}
        )
    short = sorted(
        (allocation.get(key, 0), key)
        for key, size in sizes.items()
        if allocation.get(key, 0) < min(floor, size)
    )
    if short:
        needed = sum(min(floor, size) for size in sizes.values())
        warnings.append(
            ngettext(
                "N is too small for the minimum: %(count)s stratum gets fewer than %(floor)s "
                "items (%(least)s). Raise N to %(needed)s or lower the minimum.",
                "N is too small for the minimum: %(count)s strata get fewer than %(floor)s "
                "items (as few as %(least)s). Raise N to %(needed)s or lower the minimum.",
                len(short),
            )
            % {"count": len(short), "floor": floor, "least": short[0][0], "needed": needed}
        )
    return warnings


def audit_plan(*, dataset: Dataset, task: str, size: int, method: str, floor: int) -> Plan:
    """The preview of a design over the frame's stored strata (a few small queries)."""
    stored = computations.frame_strata_read(dataset=dataset, task=task)
    plan = Plan(stored)
    if stored.result is None or not stored.result.get("strata"):
        return plan
    counts: dict[str, list[int]] = stored.result["strata"]
    sizes = {key: value[0] for key, value in counts.items()}
    choices = compare_allocations(sizes, size, floor=floor)
    labels = dict(AllocationMethod.choices)
    plan.frame_size = stored.result["frame_size"]
    plan.strata = len(sizes)
    plan.rare = stored.result["rare"]
    plan.disagree = stored.result["disagree"]
    plan.choices = [
        {
            "method": choice.method,
            "label": labels[choice.method],
            "overall_margin": choice.overall_margin,
            "worst_stratum": choice.worst_stratum,
            "worst_stratum_margin": choice.worst_stratum_margin,
            "smallest_stratum_n": choice.smallest_stratum_n,
            "chosen": choice.method == method,
        }
        for choice in choices
    ]
    plan.allocations = {choice.method: choice.allocation for choice in choices}
    largest = sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))[:PLANNER_STRATA_SHOWN]
    plan.strata_rows = [
        (key, count, [choice.allocation.get(key, 0) for choice in choices])
        for key, count in largest
    ]
    chosen = plan.allocations.get(method, {})
    plan.warnings = design_warnings(sizes, chosen, n=size, floor=floor)
    return plan
