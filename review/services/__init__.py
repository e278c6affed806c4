"""Writes of the review app: reviews, drafts, comments and adjudication (the queue's own writes
are in ``review.queue.services``)."""

from review.services.reviews import (
    ReviewConflict,
    SubmitResult,
    comment_create,
    draft_save,
    review_amend,
    review_submit,
    review_submit_visible,
    sample_adjudicate,
    sample_settle_round,
)

__all__ = [
    "ReviewConflict",
    "SubmitResult",
    "comment_create",
    "draft_save",
    "review_amend",
    "review_submit",
    "review_submit_visible",
    "sample_adjudicate",
    "sample_settle_round",
]
