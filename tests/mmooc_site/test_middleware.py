"""Site-wide middleware (mmooc_site.middleware): a page form or an address holding NUL is a
400 with a message before any view runs, in text for pages and JSON for other clients."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Dataset, ImportJob
from tests.annotation.factories import mmooc_dataset

pytestmark = pytest.mark.django_db

NUL_MESSAGE = "NUL character"
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.fixture
def page(lead: Any) -> Client:
    client = Client()
    client.force_login(lead)
    return client


def test_a_url_encoded_form_field_or_name_holding_nul_is_a_400(page: Client) -> None:
    """In a field's value or its name: 400 in text, nothing created; the same form without
    the NUL creates the dataset."""
    url = reverse("annotation:dataset_create")
    for form in ({"name": "a\x00b", "kind": "image_question"}, {"name\x00": "a", "kind": "x"}):
        reply = page.post(url, form, headers={"accept": BROWSER})
        assert reply.status_code == 400, reply.content
        assert reply["Content-Type"].startswith("text/plain")
        assert NUL_MESSAGE in reply.content.decode()
    assert not Dataset.objects.exists()
    created = page.post(url, {"name": "ab", "kind": "image_question", "version": "1.0"})
    assert created.status_code == 302 and Dataset.objects.filter(name="ab").exists()


def test_a_multipart_field_or_file_name_holding_nul_is_a_400(page: Client) -> None:
    """An upload form: a field or the uploaded file's name holding NUL is refused and no job
    is made; the file's contents may hold NUL bytes (an image does)."""
    dataset = mmooc_dataset()
    url = reverse("annotation:dataset_import", args=[dataset.pk])
    upload = SimpleUploadedFile("a.jsonl", b"{}")
    field = page.post(url, {"format": "mmooc\x00", "file": upload}, headers={"accept": BROWSER})
    assert field.status_code == 400 and NUL_MESSAGE in field.content.decode()
    # Django's multipart parser drops a NUL from a file name itself: no job holds one.
    page.post(url, {"format": "mmooc", "file": SimpleUploadedFile("a\x00.jsonl", b"{}")})
    assert all("\x00" not in j.source_name for j in ImportJob.objects.all())
    contents = page.post(
        url,
        {
            "format": "mmooc",
            "source_kind": "upload",
            "file": SimpleUploadedFile("b.jsonl", b"\x00\x01"),
        },
    )
    assert contents.status_code == 302, contents.content  # to the job, which reads the file


@pytest.mark.parametrize("accept", ["application/json", "*/*", None])
def test_scripts_get_json(page: Client, accept: str | None) -> None:
    """A script posting to a page (fetch asks for */* unless told) gets {"detail": …}, as
    the pages' own JSON endpoints answer."""
    headers = {"accept": accept} if accept else {}
    reply = page.post(
        reverse("annotation:dataset_create"), {"name": "a\x00b", "kind": "x"}, headers=headers
    )
    assert reply.status_code == 400
    assert NUL_MESSAGE in reply.json()["detail"]


def test_a_query_string_holding_nul_is_a_400_and_reads_are_not_parsed(page: Client) -> None:
    dataset = mmooc_dataset()
    url = reverse("annotation:dataset_detail", args=[dataset.pk])
    assert page.get(url + "?q=%00").status_code == 400
    assert page.get(url + "?q=ok").status_code == 200
