"""Small typed helpers over Django's test client responses."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.test import Client


def streamed(response: Any) -> Iterable[bytes]:
    """The body parts of a streaming response (the test client's type does not name them)."""
    parts: Iterable[bytes] = response.streaming_content
    return parts


def redirect_url(response: Any) -> str:
    """Where a redirect response points."""
    url: str = response.url
    return url


def browser(user: Any) -> Client:
    """A test client signed in as ``user`` through the session, as a browser is."""
    client = Client()
    client.force_login(user)
    return client
