"""Background work of the annotation app: thin tasks that take ids and call one service.

Services queue these tasks by name (``core.tasks.enqueue``), so only this module imports
the services, never the other way round.
"""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from annotation.imports.jobs import import_job_in_its_language
from annotation.imports.services import import_job_run, import_jobs_sweep
from annotation.services.bulk_jobs import sample_bulk_job_run, sample_bulk_jobs_sweep
from annotation.services.media import (
    media_asset_derive,
    media_assets_derive,
    media_derivations_sweep,
)
from annotation.snapshots.services import snapshot_build, snapshots_sweep
from annotation.webhooks.services import webhook_delivery_run, webhooks_sweep
from core.outages import storage_unreachable

# Derivation tried again this often while the media storage is away (a derivative already
# stored is kept and used, so a retry writes only what is missing).
STORAGE_RETRY_SECONDS = 30


@shared_task(name="annotation.derive_media_asset", acks_late=True, bind=True, max_retries=None)
def derive_media_asset(self: Task[Any, Any], asset_id: int) -> None:
    """Make the thumbnail or waveform peaks of one asset (a no-op when already derived)."""
    try:
        media_asset_derive(asset_id=asset_id)
    except Exception as exc:
        if storage_unreachable(exc):
            raise self.retry(exc=exc, countdown=STORAGE_RETRY_SECONDS) from exc
        raise


@shared_task(name="annotation.derive_media_assets", acks_late=True, bind=True, max_retries=None)
def derive_media_assets(self: Task[Any, Any], asset_ids: list[int]) -> None:
    """Derive the thumbnails or peaks of a batch of assets an import stored (idempotent)."""
    try:
        media_assets_derive(asset_ids=asset_ids)
    except Exception as exc:
        if storage_unreachable(exc):
            raise self.retry(exc=exc, countdown=STORAGE_RETRY_SECONDS) from exc
        raise


@shared_task(name="annotation.run_import_job", acks_late=True, soft_time_limit=50 * 60)
def run_import_job(job_id: int) -> None:
    """Run (or resume) one import job; a delivery while another worker runs it does nothing."""
    import_job_in_its_language(job_id, lambda: import_job_run(job_id=job_id))


@shared_task(name="annotation.build_snapshot", acks_late=True, soft_time_limit=50 * 60)
def build_snapshot(snapshot_id: int) -> None:
    """Build one release snapshot; a second delivery of a finished one does nothing."""
    snapshot_build(snapshot_id=snapshot_id)


@shared_task(name="annotation.run_sample_bulk_job", acks_late=True, soft_time_limit=50 * 60)
def run_sample_bulk_job(job_id: int) -> None:
    """Run one bulk action on many samples; a second delivery of a finished one does nothing."""
    sample_bulk_job_run(job_id=job_id)


@shared_task(name="annotation.sweep_jobs", acks_late=True, soft_time_limit=120)
def sweep_jobs() -> None:
    """Run by Celery beat: resume imports, snapshots, bulk actions and webhook deliveries whose
    worker died or whose message was lost, emit the webhook events of samples' statuses, and
    derive the media whose derivation's message was lost."""
    import_jobs_sweep()
    snapshots_sweep()
    sample_bulk_jobs_sweep()
    webhooks_sweep()
    media_derivations_sweep()


@shared_task(name="annotation.deliver_webhook", acks_late=True, soft_time_limit=5 * 60)
def deliver_webhook(delivery_id: int) -> None:
    """Make a webhook delivery's next attempt; early or repeated messages do nothing."""
    webhook_delivery_run(delivery_id=delivery_id)
