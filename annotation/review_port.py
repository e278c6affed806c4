"""The review queue as annotation sees it: a small, typed port that review plugs in at start-up.

Annotation owns samples and their statuses but may not import review. When its services move
samples into or out of review (sent to review, taken down, restored, re-prioritised, an import
that sends its samples on), they tell the queue through this port, and the sample list asks it
which samples a reviewer reviewed. ``review`` registers its implementation in
``ReviewConfig.ready()``. Without one (annotation alone) the calls open no slot and match no
sample.

Why a port rather than putting these entry points in review: the status change and its history
are annotation's data, and one of the callers (the end of an import) lives in annotation, so
annotation needs a way to reach the queue anyway; with the port every entry point (sample list,
API, command, import) runs the same annotation service, which is the single place the rule
lives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from annotation.models import Dataset


class ReviewQueue(Protocol):
    def sync(self, *, dataset: Dataset) -> int:
        """Bring the dataset's queue in line with its samples' statuses and priorities; return
        the number of review slots opened."""
        ...

    def reviewed_by(self, *, dataset: Dataset, username: str) -> QuerySet[Any]:
        """The ids of the dataset's samples that this user reviewed, as a subquery."""
        ...

    def has_reviews(self, *, dataset: Dataset) -> bool:
        """Whether anyone has reviewed or adjudicated a sample of the dataset."""
        ...


_queue: ReviewQueue | None = None


def review_queue_register(queue: ReviewQueue | None) -> None:
    """Plug in the review queue (``None`` unplugs it, for tests)."""
    global _queue
    _queue = queue


def review_queue_sync(*, dataset: Dataset) -> int:
    """Tell the review queue that samples of this dataset changed; the slots it opened."""
    return _queue.sync(dataset=dataset) if _queue is not None else 0


def samples_reviewed_by(*, dataset: Dataset, username: str) -> QuerySet[Any] | None:
    """The sample ids reviewed by a user, or None when no review queue is plugged in."""
    return _queue.reviewed_by(dataset=dataset, username=username) if _queue else None


def dataset_has_reviews(*, dataset: Dataset) -> bool:
    """Whether the dataset holds reviews (never, when no review queue is plugged in)."""
    return _queue.has_reviews(dataset=dataset) if _queue is not None else False
