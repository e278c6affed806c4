"""Media derivation that survives a broker which did not take its message
(annotation/services/media.py): the write goes on, and the sweep derives what was left."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from annotation import services
from annotation.models import MediaAsset
from annotation.services import media
from tests.annotation.factories import png_bytes

pytestmark = pytest.mark.django_db


def _broker_down(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    refused: list[str] = []

    def refuse(name: str, *args: Any, **options: Any) -> None:
        refused.append(name)
        raise ConnectionRefusedError("the broker is away")

    monkeypatch.setattr(media, "enqueue", refuse)
    return refused


def test_a_stored_asset_whose_derivation_the_broker_refused_is_kept_underived(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    """Storing a medium while the broker is down stores it (no error reaches the caller);
    its thumbnail waits for the sweep."""
    refused = _broker_down(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        asset = services.media_asset_store(data=png_bytes(600, 400), kind="image")
    assert refused == ["annotation.derive_media_assets"]
    assert MediaAsset.objects.get(pk=asset.pk).derived_at is None


def test_the_sweep_derives_assets_left_underived_and_leaves_fresh_ones_alone(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    """An asset underived for longer than UNDERIVED_AFTER is derived by the sweep (its
    message was lost); one stored a moment ago is left to its own message."""
    _broker_down(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        old = services.media_asset_store(data=png_bytes(600, 400), kind="image")
        fresh = services.media_asset_store(data=png_bytes(500, 400), kind="image")
    monkeypatch.undo()  # the broker is back (tasks run inline in the tests)
    MediaAsset.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - media.UNDERIVED_AFTER - dt.timedelta(seconds=1)
    )
    assert media.media_derivations_sweep() == 1
    derived = MediaAsset.objects.get(pk=old.pk)
    assert derived.derived_at is not None and derived.thumbnail
    assert MediaAsset.objects.get(pk=fresh.pk).derived_at is None
    assert media.media_derivations_sweep() == 0
