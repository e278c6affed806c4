"""Every URL in the URL conf, tried by an anonymous visitor and by each role."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from annotation import services
from annotation.models import Dataset
from tests.annotation.factories import mmooc_dataset, mmooc_sample

pytestmark = pytest.mark.django_db

# Pages that anybody may open: they show no data.
PUBLIC = {
    "login/",
    "logout/",
    "healthz/",
    "livez/",
    "i18n/setlang/",
    "favicon.ico",
    "admin/login/",
    "admin/logout/",
    # Password reset: asking for a link, and the pages after it (none shows whether an
    # account exists).
    "password-reset/",
    "password-reset/sent/",
    "password-reset/<uidb64>/<token>/",
    "password-reset/done/",
}


def _walk(patterns: list[Any], prefix: str = "") -> list[str]:
    routes: list[str] = []
    for entry in patterns:
        if isinstance(entry, URLResolver):
            routes += _walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            routes.append(prefix + str(entry.pattern))
    return routes


def _fill(route: str, ids: dict[str, int]) -> str | None:
    route = route.lstrip("^").rstrip("$").replace("\\Z", "")
    if "(?P<" in route or "<path:" in route or ("<str:" in route and "admin" not in route):
        return None

    def replace(match: re.Match[str]) -> str:
        name = match.group(2)
        return str(ids.get(name, 1))

    return "/" + re.sub(r"<(\w+):(\w+)>", replace, route)


@pytest.fixture
def world(lead: Any, annotator: Any, auditor: Any) -> dict[str, Any]:
    private = mmooc_dataset(name="private-ds-q7")
    sample = mmooc_sample(private)
    return {
        "ids": {
            "dataset_id": private.pk,
            "sample_id": sample.pk,
            "asset_id": sample.media_links.get().asset_id,
            "object_id": 1,
        },
        "lead": lead,
        "annotator": annotator,
        "auditor": auditor,
    }


def _urls(ids: dict[str, int]) -> list[str]:
    urls = []
    for route in _walk(get_resolver().url_patterns):
        if route in PUBLIC:
            continue
        url = _fill(route, ids)
        if url:
            urls.append(url)
    assert len(urls) > 10
    return urls


def test_anonymous_visitors_get_the_login_page_or_401_403_never_data(world: dict[str, Any]) -> None:
    """No URL in the URL conf shows data to an anonymous visitor."""
    client = Client()
    for url in _urls(world["ids"]):
        response = client.get(url)
        assert response.status_code in (302, 401, 403, 404, 405), url
        if response.status_code == 302:
            assert "/login/" in response["Location"], url
        assert b"What colour is the car" not in response.content, url


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_non_members_see_nothing_of_a_private_dataset(world: dict[str, Any], role: str) -> None:
    """Annotators and auditors outside a dataset get 403/404 on all its URLs, never its data."""
    client = Client()
    client.force_login(world[role])
    for url in _urls(world["ids"]):
        response = client.get(url)
        assert response.status_code < 500, url
        if response.status_code == 200 and hasattr(response, "content"):
            assert b"What colour is the car" not in response.content, url
            assert b"private-ds-q7" not in response.content or url.startswith("/admin"), url


def test_leads_reach_every_page_without_server_errors(world: dict[str, Any]) -> None:
    """A lead can open every URL and none answers with a server error."""
    client = Client()
    client.force_login(world["lead"])
    for url in _urls(world["ids"]):
        assert client.get(url).status_code < 500, url


def test_members_see_their_dataset(world: dict[str, Any]) -> None:
    """Once added to the dataset, an annotator sees it and its samples."""
    dataset_id = world["ids"]["dataset_id"]
    services.dataset_add_member(
        dataset=Dataset.objects.get(pk=dataset_id),
        user=world["annotator"],
    )
    client = Client()
    client.force_login(world["annotator"])
    assert client.get(f"/datasets/{dataset_id}/").status_code == 200
    assert client.get(f"/api/datasets/{dataset_id}/samples/").status_code == 200
