"""HTML pages and the media view: who sees what, Range requests, and S3 redirects."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from django.core.files.storage import default_storage
from django.test import Client
from django.urls import reverse
from pytest_django.asserts import assertInHTML

from annotation import services
from tests.annotation.factories import mmooc_dataset, mmooc_sample, png_bytes, wav_bytes
from tests.support.html import element, text
from tests.support.http import streamed

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _audio_sample(dataset: Any) -> Any:
    audio = services.media_asset_store(data=wav_bytes(seconds=2.0), kind="audio")
    return audio, mmooc_sample(
        dataset,
        media=[
            ("image", services.media_asset_store(data=png_bytes(colour=(5, 6, 7)), kind="image")),
            ("audio", audio),
        ],
    )


def test_media_needs_login_and_membership(annotator: Any, lead: Any) -> None:
    """Anonymous users get 401, non-members 404, members and leads the file."""
    dataset = mmooc_dataset()
    sample = mmooc_sample(dataset)
    asset = sample.media_links.get().asset
    url = reverse("annotation:media_file", args=[asset.pk])
    assert Client().get(url).status_code == 401
    assert _client(annotator).get(url).status_code == 404
    services.dataset_add_member(dataset=dataset, user=annotator)
    response = _client(annotator).get(url)
    assert response.status_code == 200
    assert b"".join(streamed(response)) == asset.file.open("rb").read()
    assert _client(lead).get(url).status_code == 200


def test_media_streams_byte_ranges_for_seeking(lead: Any) -> None:
    """A Range request gets 206 with exactly those bytes; a bad range gets 416."""
    audio, _sample = _audio_sample(mmooc_dataset())
    url = reverse("annotation:media_file", args=[audio.pk])
    whole = audio.file.open("rb").read()
    client = _client(lead)
    part = client.get(url, HTTP_RANGE="bytes=100-199")
    assert part.status_code == 206
    assert part["Content-Range"] == f"bytes 100-199/{len(whole)}"
    assert b"".join(streamed(part)) == whole[100:200]
    tail = client.get(url, HTTP_RANGE="bytes=-50")
    assert b"".join(streamed(tail)) == whole[-50:]
    open_ended = client.get(url, HTTP_RANGE=f"bytes={len(whole) - 10}-")
    assert b"".join(streamed(open_ended)) == whole[-10:]
    bad = client.get(url, HTTP_RANGE=f"bytes={len(whole) + 5}-")
    assert bad.status_code == 416 and bad["Content-Range"] == f"bytes */{len(whole)}"


def test_thumbnail_is_served_once_derived(lead: Any) -> None:
    """The thumbnail URL answers 404 until a worker made it, then serves it."""
    sample = mmooc_sample()
    asset = sample.media_links.get().asset
    url = reverse("annotation:media_thumbnail", args=[asset.pk])
    assert _client(lead).get(url).status_code == 404
    services.media_asset_derive(asset_id=asset.pk)
    response = _client(lead).get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith("image/")


def test_display_image_is_the_display_copy_or_else_the_original(lead: Any) -> None:
    """The display URL serves an image's display copy once a worker made one, and the
    original for an image without one (small enough, or not derived yet): never a 404."""
    from annotation.services.media import DISPLAY_SIZE

    sample = mmooc_sample()
    small = sample.media_links.get().asset
    large = services.media_asset_store(
        data=png_bytes(DISPLAY_SIZE + 10, 20, colour=(1, 2, 3)), kind="image"
    )
    client = _client(lead)
    url = reverse("annotation:media_display", args=[small.pk])
    with default_storage.open(small.file.name, "rb") as handle:
        original = handle.read()
    services.media_asset_derive(asset_id=small.pk)
    response = client.get(url)
    assert response.status_code == 200 and b"".join(streamed(response)) == original
    services.media_asset_derive(asset_id=large.pk)
    large.refresh_from_db()
    sample.media_links.update(asset=large)
    response = client.get(reverse("annotation:media_display", args=[large.pk]))
    assert response.status_code == 200 and response["Content-Type"] in {
        "image/webp",
        "image/jpeg",
    }
    with default_storage.open(large.display.name, "rb") as handle:
        assert b"".join(streamed(response)) == handle.read()


def test_media_accepts_api_tokens(annotator: Any) -> None:
    """A script with an API token can fetch the media of its datasets."""
    from rest_framework.authtoken.models import Token

    dataset = mmooc_dataset()
    services.dataset_add_member(dataset=dataset, user=annotator)
    asset = mmooc_sample(dataset).media_links.get().asset
    token = Token.objects.create(user=annotator)
    url = reverse("annotation:media_file", args=[asset.pk])
    assert Client().get(url, HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 200
    assert Client().get(url, HTTP_AUTHORIZATION="Token wrong").status_code == 401


@pytest.mark.s3
def test_media_on_s3_is_stored_once_and_served_by_presigned_redirect(
    s3_storage: str, lead: Any, annotator: Any
) -> None:
    """On S3 the file is stored once; members are redirected to a short-lived presigned URL."""
    data = png_bytes(800, 600, colour=(1, 99, 1))  # larger than a thumbnail: one is stored
    asset = services.media_asset_store(data=data, kind="image")
    assert services.media_asset_store(data=data, kind="image").pk == asset.pk
    sample = mmooc_sample(media=[("image", asset)])
    services.media_asset_derive(asset_id=asset.pk)
    asset.refresh_from_db()
    assert asset.thumbnail.name.startswith("thumbs/")
    url = reverse("annotation:media_file", args=[asset.pk])
    assert _client(annotator).get(url).status_code == 404
    response = _client(lead).get(url)
    assert response.status_code == 302
    location = response["Location"]
    assert (
        s3_storage in location and "X-Amz-Expires=60" in location and "X-Amz-Signature" in location
    )
    fetched = httpx.get(location)
    assert fetched.status_code == 200 and fetched.content == data
    unsigned = location.split("?", 1)[0]
    assert httpx.get(unsigned).status_code in (401, 403)
    ranged = httpx.get(location, headers={"Range": "bytes=0-9"})
    assert ranged.status_code == 206 and ranged.content == data[:10]
    assert sample.media_links.count() == 1


def test_dataset_pages_show_only_visible_datasets(annotator: Any, lead: Any) -> None:
    """An annotator sees member datasets only; a lead sees all; pages never 500."""
    mine = mmooc_dataset(name="mine")
    other = mmooc_dataset(name="other")
    services.dataset_add_member(dataset=mine, user=annotator)
    mmooc_sample(mine)
    client = _client(annotator)
    listing = client.get(reverse("annotation:dataset_list")).content.decode()
    assert "mine" in listing and "other" not in listing
    assert client.get(reverse("annotation:dataset_detail", args=[mine.pk])).status_code == 200
    assert client.get(reverse("annotation:dataset_detail", args=[other.pk])).status_code == 404
    assert client.get(reverse("annotation:dataset_create")).status_code == 403
    assert (
        _client(lead).get(reverse("annotation:dataset_detail", args=[other.pk])).status_code == 200
    )


def test_dataset_page_runs_a_fixed_number_of_queries(
    lead: Any, django_assert_max_num_queries: Any
) -> None:
    """The dataset page costs the same queries for 3 samples as for 30."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    dataset = mmooc_dataset()
    url = reverse("annotation:dataset_detail", args=[dataset.pk])
    client = _client(lead)
    for _ in range(3):
        mmooc_sample(dataset)
    with CaptureQueriesContext(connection) as small:
        assert client.get(url).status_code == 200
    for _ in range(27):
        mmooc_sample(dataset)
    with CaptureQueriesContext(connection) as large:
        assert client.get(url).status_code == 200
    assert len(large.captured_queries) == len(small.captured_queries)
    with django_assert_max_num_queries(10):
        client.get(url)


def test_lead_creates_a_dataset_from_a_preset_in_the_browser(lead: Any) -> None:
    """The form creates a dataset with the preset's terms; a duplicate name shows an error."""
    client = _client(lead)
    form = {"name": "New MMOOC", "kind": "image_question", "preset": "mmooc", "version": "1.0"}
    response = client.post(reverse("annotation:dataset_create"), form)
    assert response.status_code == 302
    again = client.post(reverse("annotation:dataset_create"), form)
    assert again.status_code == 200 and "already exists" in again.content.decode()


def test_sample_page_shows_fields_media_and_history(lead: Any) -> None:
    """The sample page shows the data exactly as stored and its history."""
    audio, sample = _audio_sample(mmooc_dataset())
    page = _client(lead).get(reverse("annotation:sample_detail", args=[sample.pk])).content.decode()
    assert sample.question in page and "<audio" in page
    assert reverse("annotation:media_file", args=[audio.pk]) in page


def test_sample_page_shows_the_fields_as_the_workbench_does(lead: Any) -> None:
    """The sample page and the review workbench share one partial of the sample's fields:
    the safety category and the predicate's heading that says what the conditions mean."""
    sample = mmooc_sample(
        mmooc_dataset(),
        safety_label="unsafe",
        safety_category="physical_harm",
        predicate=["the stove is on (image)"],
    )
    page = _client(lead).get(reverse("annotation:sample_detail", args=[sample.pk])).content.decode()
    assert text(element(page, "dd", data_testid="safety-category")) == "physical_harm"
    heading = text(element(page, "dt", data_testid="predicate-heading"))
    assert heading == "Predicate: IF all of these hold THEN unsafe"
    assertInHTML("<li>the stove is on (image)</li>", page)


def test_sample_history_shows_old_and_new_values(lead: Any) -> None:
    """Each revision lists the fields it changed with their old and new values."""
    sample = mmooc_sample(mmooc_dataset())
    services.sample_update(
        sample=sample,
        changes={"explanation": "The car is hidden."},
        by=lead,
        source="edit",
        status="verified",
    )
    page = _client(lead).get(reverse("annotation:sample_detail", args=[sample.pk])).content
    html = page.decode()
    assertInHTML("<del>There is no car in the image.</del>", html)
    assertInHTML("<ins>The car is hidden.</ins>", html)
    assertInHTML("<del>Pending review</del>", html)
    assertInHTML("<ins>Verified</ins>", html)


def test_the_what_to_do_next_bar_shows_only_with_something_to_do(lead: Any) -> None:
    """A dataset with nothing to import, send or adjudicate shows no empty "What to do next"
    bar; an empty one offers the import, one with imported samples offers to send them."""
    from annotation.models import SampleStatus

    client = Client()
    client.force_login(lead)
    dataset = mmooc_dataset()
    url = reverse("annotation:dataset_detail", args=[dataset.pk])
    assert 'class="next-steps"' in client.get(url).content.decode()  # no samples: import
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    assert 'class="next-steps"' not in client.get(url).content.decode()
    mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    page = client.get(url).content.decode()
    assert 'class="next-steps"' in page and 'id="next-send-to-review"' in page
