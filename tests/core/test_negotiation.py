"""Content negotiation (core/negotiation.py): DRF's answer for every Accept header, sooner for
the clients that state no preference."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from core.negotiation import ContentNegotiation

RENDERERS = [JSONRenderer(), BrowsableAPIRenderer()]


def _answer(negotiation: Any, accept: str | None, path: str = "/api/x/") -> Any:
    factory = APIRequestFactory()
    raw = factory.get(path) if accept is None else factory.get(path, HTTP_ACCEPT=accept)
    request = Request(raw)
    try:
        renderer, media_type = negotiation.select_renderer(request, RENDERERS)
    except NotAcceptable:
        return "406"
    return type(renderer).__name__, media_type


@pytest.mark.parametrize(
    "accept",
    [
        None,
        "",
        "*/*",
        " */* ",
        "application/json",
        "application/json; indent=4",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "text/html",
        "image/png",
        "application/*",
    ],
)
def test_the_renderer_is_drfs(accept: str | None) -> None:
    """Every Accept header gets the renderer and media type DRF's negotiation gives."""
    assert _answer(ContentNegotiation(), accept) == _answer(DefaultContentNegotiation(), accept)


def test_a_format_override_is_honoured() -> None:
    """``?format=api`` still asks for the browsable API, as with DRF's negotiation."""
    ours = _answer(ContentNegotiation(), None, "/api/x/?format=api")
    assert ours == _answer(DefaultContentNegotiation(), None, "/api/x/?format=api")
    assert ours[0] == "BrowsableAPIRenderer"
