"""Background work of the annotation app: thin tasks that take ids and call one service."""

from __future__ import annotations

from celery import shared_task

from annotation import services


@shared_task(name="annotation.derive_media_asset", acks_late=True, max_retries=3)
def derive_media_asset(asset_id: int) -> None:
    """Make the thumbnail or waveform peaks of one asset (a no-op when already derived)."""
    services.media_asset_derive(asset_id=asset_id)
