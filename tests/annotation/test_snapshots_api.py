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
from annotation.models import JobStatus, Sample, SampleStatus, Snapshot
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
    assert "data/train-00000-of-00001.parquet" in page and "only finished snapshot" in page
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


def _three_snapshots(lead: Any) -> tuple[list[Any], list[Snapshot]]:
    """v1; an edit; v2; a takedown and a new sample; v3 (samples: kept, edited, dropped, new)."""
    dataset = _dataset_with_verified(0)
    kept, edited, dropped = (mmooc_sample(dataset, status=SampleStatus.VERIFIED) for _ in "abc")
    v1 = _built(dataset, "v1")
    services.sample_update(
        sample=edited,
        changes={"explanation": "Corrected." + " long" * 100},
        by=lead,
        source="edit",
    )
    v2 = _built(dataset, "v2")
    services.sample_set_status(sample=dropped, status=SampleStatus.REMOVED, by=lead, reason="x")
    new = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    v3 = _built(dataset, "v3")
    return [kept, edited, dropped, new], [v1, v2, v3]


def test_the_snapshot_page_compares_with_any_snapshot_of_the_dataset(lead: Any) -> None:
    """By default with the previous snapshot; with ?against= any other finished one, with the
    ids added, removed and taken down and the changed fields old → new, shortened."""
    (kept, edited, dropped, new), (v1, _v2, v3) = _three_snapshots(lead)
    page = reverse("annotation:snapshot_detail", args=[v3.pk])
    default = _browser(lead).get(page).content.decode()
    assert "Against v2: 1 added, 1 removed (1 taken down), 0 changed, 2 unchanged." in default
    assert f'<option value="{v1.pk}">v1 · ' in default
    chosen = _browser(lead).get(page, {"against": v1.pk}).content.decode()
    assert "Against v1: 1 added, 1 removed (1 taken down), 1 changed, 1 unchanged." in chosen
    assert f'<option value="{v1.pk}" selected>v1 · ' in chosen
    assert f"<code>{new.external_id}</code>" in chosen.split('id="diff-added"')[1]
    assert f"<code>{dropped.external_id}</code>" in chosen.split('id="diff-taken-down"')[1]
    changed = chosen.split('id="diff-changed"')[1].split("</table>")[0]
    assert f"<code>{edited.external_id}</code>" in changed and "<code>explanation</code>" in changed
    assert "<del>There is no car in the image.</del>" in changed
    assert "<ins>Corrected. long long" in changed and "…</ins>" in changed
    assert kept.external_id not in changed
    link = reverse("annotation:sample_detail", args=[edited.pk])
    assert f'<a href="{link}"><code>{edited.external_id}</code></a>' in changed
    taken_down = reverse("annotation:sample_detail", args=[dropped.pk])
    assert f'href="{taken_down}"' in chosen.split('id="diff-taken-down"')[1]
    first = _browser(lead).get(reverse("annotation:snapshot_detail", args=[v1.pk]))
    assert 'id="snapshot-compare"' in first.content.decode()
    assert 'id="snapshot-diff-summary"' not in first.content.decode()


def test_the_comparison_reads_in_chinese(lead: Any) -> None:
    _samples, (v1, _v2, v3) = _three_snapshots(lead)
    page = _browser(lead).get(
        reverse("annotation:snapshot_detail", args=[v3.pk]),
        {"against": v1.pk},
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    )
    html = page.content.decode()
    assert "与 v1 相比：新增 1 个，移除 1 个（其中已下架 1 个），修改 1 个，未更改 1 个。" in html
    assert "修改的样本（1 个）" in html and "比较对象" in html and "Before" not in html


def test_comparing_with_a_snapshot_of_another_dataset_is_a_404(lead: Any) -> None:
    _samples, (v1, _v2, v3) = _three_snapshots(lead)
    other = _built(_dataset_with_verified(1), "elsewhere")
    page = reverse("annotation:snapshot_detail", args=[v3.pk])
    browser = _browser(lead)
    assert browser.get(page, {"against": other.pk}).status_code == 404
    assert browser.get(page, {"against": "x"}).status_code == 404
    assert browser.get(page, {"against": v3.pk}).status_code == 404
    assert browser.get(page, {"against": v1.pk, "page": 9}).status_code == 404
    api = client_for(lead)
    diff = reverse("api_snapshot_diff", args=[v3.pk])
    assert api.get(diff, {"against": other.pk}).status_code == 404
    assert api.get(reverse("api_snapshot_diff", args=[v1.pk])).status_code == 409


def test_the_comparison_page_runs_a_fixed_number_of_queries(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """However many samples changed: the page's queries stay the same."""
    dataset = _dataset_with_verified(2)
    v1 = _built(dataset, "v1")
    browser = _browser(lead)

    def count() -> int:
        snapshot = _built(dataset, f"s{Snapshot.objects.count()}")
        page = reverse("annotation:snapshot_detail", args=[snapshot.pk])
        with CaptureQueriesContext(connection) as captured:
            response = browser.get(page, {"against": v1.pk})
            assert response.status_code == 200
        return len(captured.captured_queries)

    for sample in Sample.objects.filter(dataset=dataset):
        services.sample_update(sample=sample, changes={"explanation": "A"}, by=lead, source="edit")
    few = count()
    for _ in range(6):
        mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    for sample in Sample.objects.filter(dataset=dataset):
        services.sample_update(sample=sample, changes={"explanation": "B"}, by=lead, source="edit")
    assert count() == few
    # Session and user, roles, the snapshot, the snapshots it may be compared with, the two
    # entry streams, the changed samples' contents, the shown samples' links.
    assert few == 9


def test_the_diff_api_answers_with_ids_and_changed_fields(lead: Any) -> None:
    (_kept, edited, dropped, new), (v1, v2, v3) = _three_snapshots(lead)
    api = client_for(lead)
    url = reverse("api_snapshot_diff", args=[v3.pk])
    default = api.get(url).json()
    assert default["against"] == {"id": v2.pk, "name": "v2"} and default["changed"] == 0
    data = api.get(url, {"against": v1.pk}).json()
    assert (data["added"], data["removed"], data["taken_down"], data["changed"]) == (1, 1, 1, 1)
    assert data["added_ids"] == [new.external_id]
    assert data["removed_ids"] == data["taken_down_ids"] == [dropped.external_id]
    (sample,) = data["changed_samples"]
    assert sample["external_id"] == edited.external_id
    assert [c["name"] for c in sample["changes"]] == ["explanation"]
    assert sample["changes"][0]["old"] == "There is no car in the image."
    assert (data["page"], data["pages"]) == (1, 1)


def test_a_single_file_release_lists_its_file_once(lead: Any) -> None:
    """The artifact of a JSON lines release is its only file: one row, not two."""
    snapshot = _built(_dataset_with_verified(1), "one", "jsonl")
    html = _browser(lead).get(reverse("annotation:snapshot_detail", args=[snapshot.pk]))
    name = snapshot.manifest["artifact"]["name"]
    assert html.content.decode().count(f"{name}</") == 1
    packed = _built(_dataset_with_verified(1), "zip", "hf")
    files = snapshot_selectors.snapshot_manifest_files(packed.manifest)
    assert files and len(files) == len(packed.manifest["files"])
