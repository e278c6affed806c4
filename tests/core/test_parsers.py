"""Bad request bodies get a 400 with a message on every endpoint, never a 500: NUL characters,
over-deep or over-large JSON (core.parsers, DRF's default parsers), and empty bodies."""

from __future__ import annotations

import io
import json
import uuid
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.exceptions import ParseError
from rest_framework.test import APIClient

from annotation.models import ImportJob, Sample
from core.parsers import MAX_JSON_DEPTH, FormParser, JSONParser, check_json_value
from review.models import Draft
from tests.annotation.factories import mmooc_dataset, mmooc_sample
from tests.conftest import client_for

pytestmark = pytest.mark.django_db

NUL_MESSAGE = "NUL character"


def nested(depth: int) -> str:
    return '{"payload": ' + "[" * (depth - 1) + "1" + "]" * (depth - 1) + "}"


def send(client: APIClient, method: str, url: str, body: str) -> Any:
    return getattr(client, method)(url, data=body, content_type="application/json")


def test_the_json_parser_checks_nul_depth_and_size(settings: Any) -> None:
    """NUL in a string or key, more than 100 levels, or more bytes than
    DATA_UPLOAD_MAX_MEMORY_SIZE: a ParseError with a message; 100 levels parse."""
    parser = JSONParser()

    def parse(text: str) -> Any:
        return parser.parse(io.BytesIO(text.encode()), "application/json", {})

    assert parse('{"a": "ok"}') == {"a": "ok"}
    for bad in ('{"a": "x\\u0000"}', '{"k\\u0000": 1}', '["a", ["\\u0000"]]'):
        with pytest.raises(ParseError, match=NUL_MESSAGE):
            parse(bad)
    check_json_value(json.loads("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH))  # no error
    for depth in (MAX_JSON_DEPTH + 1, 5000, 100_000):
        with pytest.raises(ParseError, match="nested more than 100 levels"):
            parse("[" * depth + "]" * depth)
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 50
    with pytest.raises(ParseError, match="larger than 50 bytes"):
        parse(json.dumps({"a": "x" * 60}))
    with pytest.raises(ParseError, match="cannot be read"):
        parse('{"a": NaN}')


def test_the_form_parser_refuses_nul() -> None:
    """A form field (or its name) holding NUL is a ParseError."""
    with pytest.raises(ParseError, match=NUL_MESSAGE):
        FormParser().parse(io.BytesIO(b"a=x%00y"), "application/x-www-form-urlencoded", {})
    data = FormParser().parse(io.BytesIO(b"a=1&a=2"), "application/x-www-form-urlencoded", {})
    assert data.getlist("a") == ["1", "2"]


def test_nul_characters_in_json_fields_are_refused_with_a_message(lead: Any) -> None:
    """The draft, review and sample endpoints that store JSON answer 400 naming the NUL, and
    store nothing (these were PostgreSQL errors, i.e. 500s)."""
    sample = mmooc_sample(mmooc_dataset())
    client = client_for(lead)
    draft = reverse("api_review_draft", args=[sample.pk])
    review = {
        "client_uuid": str(uuid.uuid4()),
        "sample": sample.pk,
        "decision": "accept",
        "values": {"reference_answer": "A\u0000"},
    }
    attempts = [
        ("put", draft, json.dumps({"payload": {"note": "x\u0000y"}})),
        ("post", reverse("api_reviews"), json.dumps(review)),
        ("patch", reverse("api_sample", args=[sample.pk]), '{"changes": {"question": "\\u0000"}}'),
    ]
    for method, url, body in attempts:
        reply = send(client, method, url, body)
        assert reply.status_code == 400, (url, reply.content)
        assert NUL_MESSAGE in reply.json()["detail"]
    assert not Draft.objects.exists()
    assert "\x00" not in Sample.objects.get(pk=sample.pk).question


@pytest.mark.parametrize("depth", [101, 1000, 100_000])
def test_deeply_nested_json_is_refused_with_a_message(lead: Any, depth: int) -> None:
    """1,000-deep JSON raised RecursionError (a 500); any depth past 100 is a 400."""
    sample = mmooc_sample(mmooc_dataset())
    reply = send(
        client_for(lead), "put", reverse("api_review_draft", args=[sample.pk]), nested(depth)
    )
    assert reply.status_code == 400
    assert "nested more than 100 levels" in reply.json()["detail"]


def test_an_over_large_body_is_refused_with_a_message(lead: Any, settings: Any) -> None:
    """A JSON or form body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 400 that says so."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    sample = mmooc_sample(mmooc_dataset())
    client = client_for(lead)
    url = reverse("api_review_draft", args=[sample.pk])
    body = json.dumps({"payload": {"note": "x" * 2000}})
    reply = send(client, "put", url, body)
    assert reply.status_code == 400 and "larger than 1000 bytes" in reply.json()["detail"]
    form = client.put(url, "note=" + "x" * 2000, content_type="application/x-www-form-urlencoded")
    assert form.status_code == 400 and "larger than 1000 bytes" in form.json()["detail"]


def test_nul_in_a_form_upload_field_or_file_name_is_refused(lead: Any) -> None:
    """Multipart fields and file names go through the same check."""
    dataset = mmooc_dataset()
    client = client_for(lead)
    url = reverse("api_dataset_imports", args=[dataset.pk])
    field = client.post(url, {"format": "mmooc", "dataset_file": "a\x00b"}, format="multipart")
    assert field.status_code == 400 and NUL_MESSAGE in field.json()["detail"]
    upload = io.BytesIO(b"{}\n")
    upload.name = "bad\x00name.jsonl"
    named = client.post(url, {"format": "mmooc", "file": upload}, format="multipart")
    assert named.status_code in (202, 400)  # Django may drop the NUL from the name itself
    assert all(
        "\x00" not in name for name in ImportJob.objects.values_list("source_name", flat=True)
    )


def test_an_empty_or_partial_review_settings_put_gets_field_errors(lead: Any) -> None:
    """PUT replaces the settings: an empty body names every missing field (it raised
    TypeError); a partial one names the fields it lacks."""
    dataset = mmooc_dataset()
    client = client_for(lead)
    url = reverse("api_review_settings", args=[dataset.pk])
    empty = send(client, "put", url, "")
    assert empty.status_code == 400
    assert set(empty.json()) == {"overlap", "blind", "show_judge_hints", "lease_seconds"}
    partial = send(client, "put", url, '{"overlap": 3}')
    assert partial.status_code == 400 and "overlap" not in partial.json()
    full = {"overlap": 3, "blind": True, "show_judge_hints": False, "lease_seconds": 600}
    # Fields an older client leaves out (the gold settings and thresholds) keep their values.
    defaults = {
        "gold_rate": 0.05,
        "gold_feedback": False,
        "min_gold_accuracy": 0.7,
        "min_gold_items": 20,
    }
    assert send(client, "put", url, json.dumps(full)).json() == {**full, **defaults}


def test_the_imports_list_is_the_paginated_object_its_schema_describes(lead: Any) -> None:
    """GET imports answers {count, next, previous, results} (the schema said a bare array)."""
    from drf_spectacular.generators import SchemaGenerator

    dataset = mmooc_dataset()
    reply = client_for(lead).get(reverse("api_dataset_imports", args=[dataset.pk]))
    assert set(reply.json()) == {"count", "next", "previous", "results"}
    schema = SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    get = schema["paths"]["/api/datasets/{dataset_id}/imports/"]["get"]
    ref = get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/PaginatedImportJobOutputList")


def test_nul_in_a_query_string_is_a_400_on_the_api_and_on_pages(lead: Any) -> None:
    """A filter value holding %00 would reach PostgreSQL (a 500): it is refused first, with
    JSON on the API and text on pages."""
    dataset = mmooc_dataset()
    client = client_for(lead)
    api = client.get(reverse("api_dataset_samples", args=[dataset.pk]) + "?status=a%00b")
    assert api.status_code == 400 and "NUL character" in api.json()["detail"]
    page = Client()
    page.force_login(lead)
    listing = page.get(reverse("annotation:dataset_detail", args=[dataset.pk]) + "?status=%00")
    assert listing.status_code == 400 and "NUL character" in listing.content.decode()
    assert client.get(reverse("api_dataset_samples", args=[dataset.pk])).status_code == 200


def test_nul_in_page_forms_is_a_400(lead: Any) -> None:
    """A page form holding NUL is refused before its view (mmooc_site.middleware): a 400 that
    names the NUL (it was a 200 with a field error), and nothing is saved."""
    page = Client()
    page.force_login(lead)
    reply = page.post(reverse("annotation:dataset_create"), {"name": "a\x00b", "kind": "x"})
    assert reply.status_code == 400 and "NUL character" in reply.content.decode()
