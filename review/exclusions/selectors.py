"""Reads of quality in consensus: which reviewers the thresholds flag, who is excluded, and
the Dawid–Skene estimate of the reviewers' confusion matrices and the samples' labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db.models import Case, Count, OuterRef, Subquery, Value, When

from annotation.models import Dataset
from review.models import Decision, Review, ReviewerExclusion, Slot
from review.selectors import review_settings_get, reviewer_gold_counts

if TYPE_CHECKING:
    from review.models import ReviewSettings

# The estimate reads at most this many samples (the latest), so that the page stays under a
# second on any dataset: 5,000 samples with 3 reviews each by 20 reviewers, 100 iterations,
# take about 0.5 s with the reading (measured on a shared 2-core machine).
MAX_ESTIMATE_SAMPLES = 5000
# Posteriors shown to two decimals need no finer convergence; the cap bounds the worst case.
MAX_ITERATIONS = 100
TOLERANCE = 1e-4
DEFAULT_POSTERIOR_THRESHOLD = 0.8
# What a review says, as Dawid–Skene classes: an accept with edits differs from a plain one
# as consensus sees it (two reviewers agree only with the same edits).
ACCEPT, EDIT, REJECT = "accept", "edit", "reject"
CLASSES = (ACCEPT, EDIT, REJECT)


@dataclass(frozen=True)
class ReviewerTrust:
    reviewer_id: int
    username: str
    reviews: int
    gold_correct: int
    gold_total: int
    accuracy: float | None
    flagged: bool
    exclusion: ReviewerExclusion | None


def is_flagged(*, correct: int, total: int, settings: ReviewSettings) -> bool:
    """Under the dataset's threshold: enough gold answers, too few of them right."""
    return total >= settings.min_gold_items and correct / total < settings.min_gold_accuracy


def reviewer_trust(*, dataset: Dataset) -> list[ReviewerTrust]:
    """Everyone who reviewed or answered gold items in the dataset, flagged or not, with their
    exclusion; flagged reviewers first. Four queries."""
    settings = review_settings_get(dataset=dataset)
    gold = reviewer_gold_counts(dataset=dataset)
    reviews = dict(
        Review.objects.filter(dataset=dataset)
        .values("reviewer_id")
        .annotate(n=Count("id"))
        .values_list("reviewer_id", "n")
    )
    exclusions = {
        e.reviewer_id: e
        for e in ReviewerExclusion.objects.filter(dataset=dataset).select_related(
            "reviewer", "excluded_by"
        )
    }
    ids = set(gold) | set(reviews) | set(exclusions)
    names = _usernames(ids)
    rows = []
    for reviewer_id in ids:
        correct, total = gold.get(reviewer_id, (0, 0))
        rows.append(
            ReviewerTrust(
                reviewer_id=reviewer_id,
                username=names.get(reviewer_id, str(reviewer_id)),
                reviews=reviews.get(reviewer_id, 0),
                gold_correct=correct,
                gold_total=total,
                accuracy=correct / total if total else None,
                flagged=is_flagged(correct=correct, total=total, settings=settings),
                exclusion=exclusions.get(reviewer_id),
            )
        )
    return sorted(rows, key=lambda r: (not r.flagged, r.username))


def flagged_reviewer_ids(*, dataset: Dataset) -> set[int]:
    """The reviewers of the dataset the thresholds flag (two queries)."""
    settings = review_settings_get(dataset=dataset)
    return {
        reviewer_id
        for reviewer_id, (correct, total) in reviewer_gold_counts(dataset=dataset).items()
        if is_flagged(correct=correct, total=total, settings=settings)
    }


def _usernames(ids: set[int]) -> dict[int, str]:
    return dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username"))


def excluded_reviewers(*, dataset: Dataset) -> list[dict[str, str]]:
    """The reviewers excluded from the dataset's consensus, as a release's manifest lists
    them (plain data, never translated)."""
    rows = (
        ReviewerExclusion.objects.filter(dataset=dataset)
        .order_by("reviewer__username")
        .values_list("reviewer__username", "excluded_by__username", "created_at", "reason")
    )
    return [
        {"reviewer": name, "excluded_by": by or "", "excluded_at": at.isoformat(), "reason": why}
        for name, by, at, why in rows
    ]


@dataclass(frozen=True)
class UncertainSample:
    sample_id: int
    label: str
    posterior: float


@dataclass(frozen=True)
class ConsensusEstimate:
    classes: tuple[str, ...]
    # (username, [(true class, [P(says l | true class) for l in classes])])
    reviewers: list[tuple[str, list[tuple[str, list[float]]]]]
    priors: list[tuple[str, float]]
    samples: int
    truncated: bool  # more samples qualified than MAX_ESTIMATE_SAMPLES
    uncertain: list[UncertainSample]
    iterations: int
    converged: bool


def estimate_labels(
    *, dataset: Dataset, max_samples: int = MAX_ESTIMATE_SAMPLES
) -> tuple[list[tuple[int, str, str]], bool]:
    """(sample id, username, class) of the counted reviews in each sample's latest round, for
    the latest ``max_samples`` samples with at least two such reviews (k ≥ 2). Two queries."""
    latest = (
        Slot.objects.filter(sample_id=OuterRef("sample_id"), gold=False)
        .order_by("-round")
        .values("round")[:1]
    )
    excluded = ReviewerExclusion.objects.filter(dataset=dataset).values("reviewer_id")
    counted = Review.objects.filter(dataset=dataset, round=Subquery(latest)).exclude(
        reviewer_id__in=excluded
    )
    samples = list(
        counted.values("sample_id")
        .annotate(n=Count("id"))
        .filter(n__gte=2)
        .order_by("-sample_id")
        .values_list("sample_id", flat=True)[: max_samples + 1]
    )
    chosen = set(samples[:max_samples])
    verdict = Case(
        When(decision=Decision.REJECT, then=Value(REJECT)),
        When(values={}, then=Value(ACCEPT)),
        default=Value(EDIT),
    )
    rows = (
        counted.filter(sample_id__gte=min(chosen, default=0))
        .annotate(verdict=verdict)
        .order_by("sample_id", "id")
        .values_list("sample_id", "reviewer__username", "verdict")
    )
    labels = [(sid, name, label) for sid, name, label in rows if sid in chosen]
    return labels, len(samples) > max_samples


def consensus_estimate(
    *, dataset: Dataset, threshold: float = DEFAULT_POSTERIOR_THRESHOLD
) -> ConsensusEstimate | None:
    """The Dawid–Skene estimate on the dataset's samples with k ≥ 2 counted reviews (None
    when there are none), and the samples whose most probable label has a posterior below
    ``threshold``, least certain first."""
    labels, truncated = estimate_labels(dataset=dataset)
    if not labels:
        return None
    # numpy loads here, not with the web process (tests/mmooc_site/test_lean_imports.py).
    from review.quality.dawid_skene import dawid_skene

    estimate = dawid_skene(
        [(str(sid), name, label) for sid, name, label in labels],
        classes=CLASSES,
        max_iterations=MAX_ITERATIONS,
        tolerance=TOLERANCE,
    )
    reviewers = [
        (
            name,
            [
                (true, [round(float(p), 3) for p in estimate.confusion[r, j]])
                for j, true in enumerate(estimate.classes)
            ],
        )
        for r, name in enumerate(estimate.reviewers)
    ]
    uncertain = []
    for item, row in zip(estimate.items, estimate.posteriors, strict=True):
        best = int(row.argmax())
        if float(row[best]) < threshold:
            uncertain.append(UncertainSample(int(item), estimate.classes[best], float(row[best])))
    uncertain.sort(key=lambda u: (u.posterior, u.sample_id))
    return ConsensusEstimate(
        classes=estimate.classes,
        reviewers=sorted(reviewers),
        priors=[
            (c, round(float(p), 3)) for c, p in zip(estimate.classes, estimate.priors, strict=True)
        ],
        samples=len(estimate.items),
        truncated=truncated,
        uncertain=uncertain,
        iterations=estimate.iterations,
        converged=estimate.converged,
    )
