"""Reads of the annotator's side: the work left for a reviewer per dataset, and their reviews."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import BooleanField, Count, Exists, ExpressionWrapper, OuterRef, Q, QuerySet

from annotation import selectors as annotation_selectors
from annotation.models import Dataset
from core.roles import ANNOTATOR
from review.models import Review, Slot
from review.selectors import AMENDABLE_STATUSES

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@dataclass(frozen=True)
class ReviewerWork:
    """A reviewer's work on one dataset: reviews submitted, and samples still open to them
    (they need reviews and the reviewer has not reviewed them in their current round)."""

    done: int
    remaining: int

    @property
    def total(self) -> int:
        return self.done + self.remaining

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def reviewer_work(*, reviewer: User, dataset_ids: Iterable[int]) -> dict[int, ReviewerWork]:
    """The work of a reviewer on each of these datasets, in two queries whatever their number."""
    ids = list(dataset_ids)
    if not ids:
        return {}
    done = dict(
        Review.objects.filter(dataset_id__in=ids, reviewer=reviewer)
        .order_by()
        .values_list("dataset_id")
        .annotate(n=Count("id"))
        .values_list("dataset_id", "n")
    )
    reviewed = Slot.objects.filter(
        sample=OuterRef("sample"), round=OuterRef("round"), reviewer=reviewer, done=True
    )
    remaining = dict(
        Slot.objects.filter(dataset_id__in=ids, done=False, gold=False)
        .exclude(Exists(reviewed))
        .order_by()
        .values_list("dataset_id")
        .annotate(n=Count("sample", distinct=True))
        .values_list("dataset_id", "n")
    )
    return {
        pk: ReviewerWork(done=done.get(pk, 0), remaining=remaining.get(pk, 0))
        for pk in ids
        if pk in done or pk in remaining
    }


def dataset_list_work(*, user: User, datasets: list[Dataset]) -> dict[int, ReviewerWork]:
    """What the dataset list shows beside each dataset for this user (see annotation's
    dataset list extensions): only on the datasets they review in, not those they audit."""
    reviewing = annotation_selectors.dataset_list_visible(user=user, role=ANNOTATOR).filter(
        pk__in=[d.pk for d in datasets]
    )
    return reviewer_work(reviewer=user, dataset_ids=list(reviewing.values_list("pk", flat=True)))


def my_reviews(*, reviewer: User, dataset: Dataset | None = None) -> QuerySet[Review]:
    """The reviews a reviewer submitted on datasets they can still see, newest first, each
    marked ``amendable`` while its sample waits for the other reviews of that round."""
    datasets = annotation_selectors.dataset_list_visible(user=reviewer)
    later_round = Slot.objects.filter(sample=OuterRef("sample"), round__gt=OuterRef("round"))
    reviews = (
        Review.objects.filter(reviewer=reviewer, dataset__in=datasets)
        .select_related("sample", "dataset")
        .annotate(
            amendable=ExpressionWrapper(
                Q(sample__status__in=AMENDABLE_STATUSES) & ~Exists(later_round),
                output_field=BooleanField(),
            )
        )
        .order_by("-created_at", "-id")
    )
    if dataset is not None:
        reviews = reviews.filter(dataset=dataset)
    return reviews


def last_review_amendable(*, reviewer: User, dataset: Dataset) -> Review | None:
    """The reviewer's latest review in the dataset while it can still be amended (what the
    workbench's undo reopens); None once its sample is settled or nothing was submitted."""
    last = my_reviews(reviewer=reviewer, dataset=dataset).first()
    return last if last is not None and getattr(last, "amendable", False) else None
