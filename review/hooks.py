"""Review's side of ``annotation.extensions``: what annotation may ask of the review queue.

Registered in ``ReviewConfig.ready()``, so that annotation's services (send to review, take
down, restore, priorities, the end of an import) open and close review slots, and its sample
list filters by reviewer, without importing review.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet

from annotation.models import Dataset, Sample
from review.models import Outcome, Review, Slot
from review.queue import assignments
from review.queue.services import QUEUED_STATUSES, queue_sync

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class ReviewQueueForAnnotation:
    def sync(self, *, dataset: Dataset, sample_ids: Sequence[int] | None = None) -> int:
        return queue_sync(dataset=dataset, sample_ids=sample_ids)

    def refresh(self, *, dataset_id: int, sample_ids: Sequence[int] | None = None) -> int:
        if sample_ids is not None and not sample_ids:
            return 0  # nothing changed: no statement, whatever the dataset's size
        # Opening a queue is the lead's decision, but a sample that awaits review (a re-import
        # sent a settled one back) is one they already made: it gets its slots even in a
        # dataset whose queue was never opened.
        if (
            not Slot.objects.filter(dataset_id=dataset_id).exists()
            and not Sample.objects.filter(
                dataset_id=dataset_id, status__in=QUEUED_STATUSES
            ).exists()
        ):
            return 0
        return queue_sync(dataset=Dataset.objects.get(pk=dataset_id), sample_ids=sample_ids)

    def reviewed_by(self, *, dataset: Dataset, username: str) -> QuerySet[Any]:
        return Review.objects.filter(dataset=dataset, reviewer__username=username).values(
            "sample_id"
        )

    def has_reviews(self, *, dataset: Dataset) -> bool:
        return (
            Review.objects.filter(dataset=dataset).exists()
            or Outcome.objects.filter(dataset=dataset).exists()
        )

    def assignees_check(self, *, dataset: Dataset, usernames: Iterable[str]) -> None:
        assignments.assignees_checked(dataset=dataset, usernames=usernames)

    def assign(
        self,
        *,
        dataset: Dataset,
        sample_ids: Sequence[int],
        usernames: Iterable[str],
        by: User | None,
    ) -> int:
        return assignments.samples_assign(
            dataset=dataset, sample_ids=sample_ids, assignees=usernames, by=by
        )

    def unassign(
        self, *, dataset: Dataset, sample_ids: Sequence[int], usernames: Iterable[str]
    ) -> int:
        return assignments.samples_unassign(
            dataset=dataset, sample_ids=sample_ids, assignees=usernames
        )
