"""Writes of the review app: settings and queue, claims and leases, reviews and adjudication."""

from core.lease_sql import OPEN_SINCE
from review.services.queue import (
    Lease,
    LeasedCard,
    claim_statement_applies,
    leased_card,
    queue_sync,
    review_settings_update,
    slot_claim,
    slot_claim_card,
    slot_release,
    slot_skip,
)
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
    "OPEN_SINCE",
    "Lease",
    "LeasedCard",
    "ReviewConflict",
    "SubmitResult",
    "claim_statement_applies",
    "comment_create",
    "draft_save",
    "leased_card",
    "queue_sync",
    "review_amend",
    "review_settings_update",
    "review_submit",
    "review_submit_visible",
    "sample_adjudicate",
    "sample_settle_round",
    "slot_claim",
    "slot_claim_card",
    "slot_release",
    "slot_skip",
]
