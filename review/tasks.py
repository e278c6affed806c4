"""Review's background tasks: the Reviewers page's figures, and the sweep that recovers them."""

from __future__ import annotations

from celery import shared_task

from core.tasks import RETRY_ON_DATABASE_ERROR
from review.quality import computations as quality_computations


@shared_task(
    name="review.compute_reviewer_quality",
    **RETRY_ON_DATABASE_ERROR,
    soft_time_limit=1800,
    time_limit=1900,
)
def compute_reviewer_quality(computation_id: int) -> None:
    """Compute every reviewer's figures on a dataset and store them (idempotent)."""
    quality_computations.computation_run(computation_id=computation_id)


@shared_task(name="review.sweep_jobs", acks_late=True, soft_time_limit=120)
def sweep_jobs() -> None:
    """Run by Celery beat: run again the figures whose worker died or whose message was lost."""
    quality_computations.computations_sweep()
