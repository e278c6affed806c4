"""Snapshot API and pages (annotation/snapshots/apis.py, snapshot_views.py): leads only,
short-lived download links (signed locally, presigned on S3), shapes and query counts.
"""

from __future__ import annotations

import time
from typing import Any
from unittest import mock

import httpx
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import services
from annotation.models import JobStatus, SampleStatus, Snapshot
from annotation.snapshots import selectors as snapshot_selectors
from annotation.snapshots import services as snapshot_services
from tests.annotation.factories import mmooc_dataset, mmooc_sample
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def _browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _dataset_with_verified(n: int = 2) -> Any:
    dataset = mmooc_dataset()
    for _ in range(n):
        mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    return dataset


def _built(dataset: Any, name: str = "v1", fmt: str = "jsonl") -> Snapshot:
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name=name, format=fmt, queue=False
    )
    built = snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    assert built is not None and built.status == JobStatus.SUCCEEDED
    return built


def test_lead_creates_a_snapshot_through_the_api_and_downloads_it(
    lead: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """POST queues the build on commit; the download link serves the stored bytes."""
    dataset = _dataset_with_verified()
    api = client_for(lead)
    url = reverse("api_dataset_snapshots", args=[dataset.pk])
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = api.post(
            url,
            {"name": "v1", "format": "parquet", "scenarios": ["coarse_perception"]},
            format="json",
        )
    assert response.status_code == 202, response.content
    assert response["Location"] == f"/api/snapshots/{response.json()['id']}/"
    assert len(callbacks) == 1
    body = response.json()
    assert body["status"] == "queued"
    body = api.get(body["url"]).json()
    assert body["status"] == "succeeded" and body["done"] == body["total"] == 2
    assert body["filter"] == {"statuses": ["verified"], "scenarios": ["coarse_perception"]}
    assert body["manifest"]["counts"]["samples"] == 2
    link = api.get(body["download_url"]).json()
    assert link["expires_in"] == 300 and "/snapshots/file/" in link["url"]
    fetched = Client().get(link["url"])  # the signed link itself needs no session
    assert fetched.status_code == 200
    snapshot = Snapshot.objects.get(pk=body["id"])
    with snapshot.file.open("rb") as handle:
        assert b"".join(fetched.streaming_content) == handle.read()  # type: ignore[attr-defined]
    assert "attachment" in fetched["Content-Disposition"]
    manifest = api.get(body["download_url"] + "?file=manifest").json()
    assert Client().get(manifest["url"]).status_code == 200
    assert [s["name"] for s in api.get(url).json()] == ["v1"]


def test_bad_api_input_gets_400_with_a_message(lead: Any) -> None:
    """Unknown formats and duplicate names are 400s with readable messages, codes the
    taxonomy lacks 404s, never 500."""
    dataset = _dataset_with_verified(1)
    api = client_for(lead)
    url = reverse("api_dataset_snapshots", args=[dataset.pk])
    assert api.post(url, {"name": "a", "format": "xlsx"}, format="json").status_code == 400
    bad = api.post(url, {"name": "a", "format": "jsonl", "categories": ["ZZZ"]}, format="json")
    assert bad.status_code == 404 and "ZZZ" in str(bad.json())
    assert api.post(url, {"name": "a", "format": "jsonl"}, format="json").status_code == 202
    again = api.post(url, {"name": "a", "format": "tsv"}, format="json")
    assert again.status_code == 400 and "already has a snapshot" in str(again.json())
    assert api.get(reverse("api_snapshot_download", args=[10**6])).status_code == 404
    wrong = api.get(reverse("api_snapshot_download", args=[Snapshot.objects.get().pk]) + "?file=x")
    assert wrong.status_code == 400


def test_download_is_refused_until_the_snapshot_is_built(lead: Any) -> None:
    """A queued snapshot has no link yet: 409 from the API, 404 from the page."""
    dataset = _dataset_with_verified(1)
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name="q", format="jsonl", queue=False
    )
    assert (
        client_for(lead).get(reverse("api_snapshot_download", args=[snapshot.pk])).status_code
        == 409
    )
    page = _browser(lead).get(reverse("annotation:snapshot_download", args=[snapshot.pk]))
    assert page.status_code == 404


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_annotators_and_auditors_can_neither_create_nor_download(
    role: str, request: pytest.FixtureRequest
) -> None:
    """Even as dataset members, non-leads get 403 from every snapshot API call and page."""
    user = request.getfixturevalue(role)
    dataset = _dataset_with_verified(1)
    services.dataset_add_member(dataset=dataset, user=user)
    snapshot = _built(dataset)
    api = client_for(user)
    create = api.post(
        reverse("api_dataset_snapshots", args=[dataset.pk]),
        {"name": "mine", "format": "jsonl"},
        format="json",
    )
    assert create.status_code == 403
    assert api.get(reverse("api_dataset_snapshots", args=[dataset.pk])).status_code == 403
    assert api.get(reverse("api_snapshot", args=[snapshot.pk])).status_code == 403
    assert api.get(reverse("api_snapshot_download", args=[snapshot.pk])).status_code == 403
    browser = _browser(user)
    pages = [
        reverse("annotation:snapshot_list", args=[dataset.pk]),
        reverse("annotation:snapshot_detail", args=[snapshot.pk]),
        reverse("annotation:snapshot_download", args=[snapshot.pk]),
    ]
    for page in pages:
        assert browser.get(page).status_code == 403, page
    posted = browser.post(pages[0], {"name": "mine", "format": "jsonl", "statuses": ["verified"]})
    assert posted.status_code == 403
    assert Snapshot.objects.count() == 1
    assert client_for(user).get(reverse("api_snapshot", args=[snapshot.pk])).status_code == 403
    anonymous = Client().get(reverse("api_snapshot_download", args=[snapshot.pk]))
    assert anonymous.status_code in (401, 403)


def test_signed_links_expire_and_cannot_be_forged(lead: Any, settings: Any) -> None:
    """A local download link stops working after S3_PRESIGN_SECONDS; a changed one never works."""
    settings.S3_PRESIGN_SECONDS = 60
    snapshot = _built(_dataset_with_verified(1))
    link = snapshot_selectors.snapshot_download_link(snapshot=snapshot)
    assert link is not None
    assert Client().get(link).status_code == 200
    assert Client().get(link[:-3] + "abc/").status_code == 403
    with mock.patch("django.core.signing.time.time", return_value=time.time() - 61):
        old = snapshot_selectors.snapshot_download_link(snapshot=snapshot)
    assert old is not None
    expired = Client().get(old)
    assert expired.status_code == 403 and b"expired" in expired.content


def test_lead_uses_the_pages_to_export_and_read_the_manifest(
    lead: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The form queues a snapshot and leads to its page, which shows counts and files."""
    dataset = _dataset_with_verified(2)
    browser = _browser(lead)
    listing = reverse("annotation:snapshot_list", args=[dataset.pk])
    assert browser.get(listing).status_code == 200
    form = {"name": "release-1", "format": "hf", "statuses": ["verified"], "groups": ["ooc"]}
    with django_capture_on_commit_callbacks(execute=True):
        response = browser.post(listing, form)
    assert response.status_code == 302
    page = browser.get(response["Location"]).content.decode()
    snapshot = Snapshot.objects.get()
    assert snapshot.filter == {"statuses": ["verified"], "groups": ["ooc"]}
    assert snapshot.manifest["artifact"]["sha256"] in page
    assert "data/train-00000-of-00001.parquet" in page and "first snapshot" in page
    download = browser.get(reverse("annotation:snapshot_download", args=[snapshot.pk]))
    assert download.status_code == 302 and "/snapshots/file/" in download["Location"]
    duplicate = browser.post(listing, form)
    assert duplicate.status_code == 200 and "already has a snapshot" in duplicate.content.decode()
    detail = reverse("annotation:dataset_detail", args=[dataset.pk])
    assert listing in browser.get(detail).content.decode()


def test_snapshot_list_page_and_api_run_a_fixed_number_of_queries(lead: Any) -> None:
    """Listing 1 or 4 snapshots costs the same queries, on the page and in the API."""
    dataset = _dataset_with_verified(1)
    _built(dataset, "a")
    browser, api = _browser(lead), client_for(lead)
    page = reverse("annotation:snapshot_list", args=[dataset.pk])
    endpoint = reverse("api_dataset_snapshots", args=[dataset.pk])

    def count(client: Any, url: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured.captured_queries)

    count(api, endpoint)  # the API client's user object caches its roles after one request
    small = (count(browser, page), count(api, endpoint))
    for name in ("b", "c", "d"):
        _built(dataset, name)
    assert (count(browser, page), count(api, endpoint)) == small
    assert small[0] <= 8 and small[1] <= 3


@pytest.mark.s3
def test_on_s3_the_download_is_a_presigned_redirect(s3_storage: str, lead: Any) -> None:
    """With S3 storage the release is stored in the bucket and served by a presigned URL."""
    snapshot = _built(_dataset_with_verified(1), fmt="parquet")
    response = _browser(lead).get(reverse("annotation:snapshot_download", args=[snapshot.pk]))
    assert response.status_code == 302
    location = response["Location"]
    assert s3_storage in location and "X-Amz-Signature" in location
    fetched = httpx.get(location)
    assert fetched.status_code == 200
    with snapshot.file.open("rb") as handle:
        assert fetched.content == handle.read()
    assert httpx.get(location.split("?", 1)[0]).status_code in (401, 403)
    link = client_for(lead).get(reverse("api_snapshot_download", args=[snapshot.pk])).json()
    assert "X-Amz-Expires" in link["url"]


@pytest.mark.postgres
@pytest.mark.redis
def test_a_real_worker_builds_the_snapshot(live_worker: Any, lead: Any) -> None:
    """Created through the API, the snapshot is built by a separate Celery worker process."""
    from tests.support.processes import wait_until

    dataset = _dataset_with_verified(3)
    response = client_for(lead).post(
        reverse("api_dataset_snapshots", args=[dataset.pk]),
        {"name": "worker", "format": "jsonl"},
        format="json",
    )
    assert response.status_code == 202
    snapshot_id = response.json()["id"]

    def finished() -> bool:
        return Snapshot.objects.get(pk=snapshot_id).status in {
            JobStatus.SUCCEEDED,
            JobStatus.FAILED,
        }

    wait_until(finished, timeout=60, what="the worker to build the snapshot")
    snapshot = Snapshot.objects.get(pk=snapshot_id)
    assert snapshot.status == JobStatus.SUCCEEDED, snapshot.message
    assert snapshot.done == 3 and snapshot.manifest["counts"]["samples"] == 3


def test_the_snapshot_page_says_how_many_samples_the_mmooc_layout_left_out(lead: Any) -> None:
    """An MMOOC-layout snapshot names the samples it left out (no OOC or IC group)."""
    dataset = _dataset_with_verified(1)
    mmooc_sample(dataset, status=SampleStatus.VERIFIED, answerability_group="")
    left = _browser(lead).get(
        reverse("annotation:snapshot_detail", args=[_built(dataset, "m", "mmooc").pk])
    )
    assert 'id="snapshot-left-out"' in left.content.decode()
    assert "1 selected sample was left out" in left.content.decode()
    whole = _browser(lead).get(
        reverse("annotation:snapshot_detail", args=[_built(dataset, "all", "jsonl").pk])
    )
    assert 'id="snapshot-left-out"' not in whole.content.decode()
