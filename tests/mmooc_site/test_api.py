"""The REST API: authentication, roles, shape, and the OpenAPI schema."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import services
from tests.annotation.factories import mmooc_dataset, mmooc_sample
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def test_api_needs_authentication(api_client: APIClient) -> None:
    """Anonymous API calls get 401/403, never data."""
    for url in ["/api/datasets/", "/api/me/", "/api/schema/"]:
        assert api_client.get(url).status_code in (401, 403)


def test_token_authentication_works(annotator: Any) -> None:
    """A script authenticates with a token."""
    token = Token.objects.create(user=annotator)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.get("/api/me/")
    assert response.status_code == 200
    assert response.json() == {"username": annotator.username, "roles": ["annotator"]}


def test_only_leads_create_datasets(annotator: Any, lead: Any) -> None:
    """Annotators get 403; leads create a dataset with its preset; bad input gets 400."""
    body = {"name": "api", "kind": "trimodal", "preset": "mcbench"}
    assert client_for(annotator).post("/api/datasets/", body).status_code == 403
    created = client_for(lead).post("/api/datasets/", body)
    assert created.status_code == 201
    assert {t["code"] for t in created.json()["terms"]} >= {"physical_harm", "social_harm"}
    duplicate = client_for(lead).post("/api/datasets/", body)
    assert duplicate.status_code == 400 and "already exists" in str(duplicate.json())
    bad = client_for(lead).post("/api/datasets/", {"name": "x", "kind": "video"})
    assert bad.status_code == 400 and "kind" in bad.json()


def test_sample_list_is_paginated_and_query_bounded(
    lead: Any, django_assert_max_num_queries: Any
) -> None:
    """The sample list costs a fixed number of queries whatever the page holds."""
    dataset = mmooc_dataset()
    for _ in range(12):
        mmooc_sample(dataset)
    client = client_for(lead)
    # roles, dataset, the planner's estimate, the count within its budget (savepoint, timeout,
    # count, rollback, release), page, media
    with django_assert_max_num_queries(10):
        response = client.get(f"/api/datasets/{dataset.pk}/samples/?limit=10")
    body = response.json()
    assert body["count"] == 12 and len(body["results"]) == 10
    assert body["results"][0]["media"][0]["url"].startswith("/media/")


def test_leads_correct_labels_with_a_reason_and_history(lead: Any, annotator: Any) -> None:
    """PATCH by a lead changes labels and records why; annotators may not; a code the
    taxonomy lacks is 404 (as in review's edits), a change that breaks the sample's rules 409
    (with an unknown code too), a field no one may change or a value of the wrong type 400,
    and never a 500."""
    dataset = mmooc_dataset()
    services.dataset_add_member(dataset=dataset, user=annotator)
    sample = mmooc_sample(dataset)
    body = {"changes": {"category_code": "MA"}, "reason": "ambiguous"}
    assert (
        client_for(annotator).patch(f"/api/samples/{sample.pk}/", body, format="json").status_code
        == 403
    )
    response = client_for(lead).patch(f"/api/samples/{sample.pk}/", body, format="json")
    assert response.status_code == 200 and response.json()["category_code"] == "MA"
    assert sample.revisions.last().reason == "ambiguous"  # type: ignore[union-attr]
    bad = client_for(lead).patch(
        f"/api/samples/{sample.pk}/",
        {"changes": {"category_code": "ZZ"}, "reason": "x"},
        format="json",
    )
    assert bad.status_code == 404 and "ZZ" in str(bad.json())
    both = client_for(lead).patch(
        f"/api/samples/{sample.pk}/",
        {"changes": {"category_code": "ZZ", "question": ""}, "reason": "x"},
        format="json",
    )
    assert both.status_code == 409 and "ZZ" in str(both.json())
    assert "question is empty" in str(both.json())
    wrongs: list[dict[str, Any]] = [{"question": 1.5}, {"options": "A"}, {"generator_models": [{}]}]
    for wrong in wrongs:
        typed = client_for(lead).patch(
            f"/api/samples/{sample.pk}/", {"changes": wrong, "reason": "x"}, format="json"
        )
        assert typed.status_code == 400 and set(typed.json()["changes"]) == set(wrong), wrong
    unknown = client_for(lead).patch(
        f"/api/samples/{sample.pk}/",
        {"changes": {"status": "verified"}, "reason": "x"},
        format="json",
    )
    assert unknown.status_code == 400


def test_schema_describes_every_resource(lead: Any) -> None:
    """/api/schema/ describes every route under /api/ and validates without warnings."""
    response = client_for(lead).get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    paths = set(schema["paths"])
    routes = {
        "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
        for route in _routes(get_resolver().url_patterns)
        if route.startswith("api/") and route != "api/schema/"
    }
    assert len(routes) > 20
    assert routes - paths == set()
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")


def _routes(patterns: list[Any], prefix: str = "") -> list[str]:
    found: list[str] = []
    for entry in patterns:
        if isinstance(entry, URLResolver):
            found += _routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            found.append(prefix + str(entry.pattern))
    return found
