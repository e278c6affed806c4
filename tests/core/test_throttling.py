"""The API's per-user rate limit on Redis (core/throttling.py): one counter per window."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import UserRateThrottle

from core import throttling
from core.redis_wire import cache_redis

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def test_a_caller_past_the_rate_waits_for_the_next_window(
    monkeypatch: pytest.MonkeyPatch, annotator: Any
) -> None:
    """Past the rate, calls get 429 with a Retry-After no longer than the period, and
    another user keeps their own count."""
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "3/minute"})
    clock = [1000.0]  # 40 s into the window [960, 1020)
    monkeypatch.setattr(throttling.UserRateThrottle, "timer", lambda self: clock[0])
    client = APIClient()
    client.force_authenticate(annotator)
    codes = [client.get(reverse("api_me")).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert client.get(reverse("api_me")).headers["Retry-After"] == "20"
    clock[0] = 1020.0  # the next window
    assert client.get(reverse("api_me")).status_code == 200
    other = APIClient()
    other.force_authenticate(type(annotator).objects.create_user(username="other-caller"))
    assert other.get(reverse("api_me")).status_code == 200


def test_the_windows_counter_expires_with_the_window(
    monkeypatch: pytest.MonkeyPatch, annotator: Any
) -> None:
    """One counter per user and window, set to expire just after the window (so counters of
    past windows never pile up), counting each call once."""
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "50/minute"})
    monkeypatch.setattr(throttling.UserRateThrottle, "timer", lambda self: 1000.0)
    shared = cache_redis()
    assert shared is not None
    redis_client, prefix = shared
    client = APIClient()
    client.force_authenticate(annotator)
    for _ in range(3):
        assert client.get(reverse("api_me")).status_code == 200
    key = f"{prefix}:throttle:throttle_user_{annotator.pk}:16"
    count, ttl, _deleted = redis_client.execute(("GET", key), ("TTL", key), ("DEL", key))
    assert count == b"3"
    assert isinstance(ttl, int) and 0 < ttl <= 61
