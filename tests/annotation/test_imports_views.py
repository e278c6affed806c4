"""Import pages: the upload form and job pages are for leads; the job page shows progress and
the error report, which downloads as CSV. One real-browser test watches the live progress.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from PIL import Image

from annotation import services
from annotation.imports import services as import_services
from annotation.models import (
    ImportJob,
    ImportJobStatus,
    ImportRowError,
    ImportSourceKind,
)
from tests.annotation.imports_support import (
    LOGICVISTA,
    b64,
    dataset_for,
    import_job_of,
    mmooc_record,
    needs_logicvista,
    run_import,
    write_lines,
)
from tests.support.browser import chromium, sign_in
from tests.support.html import element, has, text
from tests.support.http import streamed

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _bad_job(tmp_path: Path) -> ImportJob:
    records = [mmooc_record(1), mmooc_record(2, answer="=HYPERLINK(1)"), "{oops"]
    return run_import(
        dataset_for("mmooc", "mmooc"), "mmooc", write_lines(tmp_path / "m.jsonl", records)
    )


@pytest.mark.parametrize("role", ["annotator", "auditor"])
def test_import_pages_are_for_leads_only(
    request: pytest.FixtureRequest, tmp_path: Path, role: str
) -> None:
    """Annotators and auditors, even members of the dataset, get 403 on every import page."""
    user = request.getfixturevalue(role)
    job = _bad_job(tmp_path)
    services.dataset_add_member(dataset=job.dataset, user=user)
    client = _client(user)
    form_url = reverse("annotation:dataset_import", args=[job.dataset_id])
    assert client.get(form_url).status_code == 403
    assert client.post(form_url, {"format": "mmooc"}).status_code == 403
    assert client.get(reverse("annotation:import_job", args=[job.pk])).status_code == 403
    assert client.get(reverse("annotation:import_job_errors_csv", args=[job.pk])).status_code == 403
    detail = client.get(reverse("annotation:dataset_detail", args=[job.dataset_id]))
    assert form_url not in detail.content.decode()


def test_lead_uploads_through_the_form_and_lands_on_the_job_page(
    lead: Any, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    """The form takes a file, starts the job and redirects to its page with counts, errors
    and, once finished, links to where its result is."""
    dataset = dataset_for("mmooc", "mmooc")
    client = _client(lead)
    form_url = reverse("annotation:dataset_import", args=[dataset.pk])
    assert (
        form_url
        in client.get(reverse("annotation:dataset_detail", args=[dataset.pk])).content.decode()
    )
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(1), mmooc_record(2, answer="Q")])
    upload = SimpleUploadedFile("m.jsonl", path.read_bytes())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            form_url, {"format": "mmooc", "source_kind": ImportSourceKind.UPLOAD, "file": upload}
        )
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:import_job", args=[job.pk])
    page = client.get(response["Location"]).content.decode()
    assert job.get_status_display() == "Finished with errors"
    assert 'data-status="succeeded_with_errors"' in page
    assert "Finished with errors" in page
    assert "the answer &#x27;Q&#x27; is not one of the options" in page
    assert reverse("api_import_job", args=[job.pk]) in page
    assert "js/job-progress.js" in page
    results = element(page, id="import-results")
    assert not has(results, "hidden")  # finished: the links to its result show
    assert element(results, "a", href=reverse("annotation:sample_list", args=[dataset.pk]))
    listing = client.get(form_url).content.decode()
    assert reverse("annotation:import_job", args=[job.pk]) in listing
    counts = "<th>Imported</th> <th>Unchanged</th> <th>Updated</th> <th>Rejected</th>"
    assert all(counts in " ".join(html.split()) for html in (page, listing))  # both tables


def test_form_errors_are_shown_with_a_400(lead: Any, settings: Any) -> None:
    """A missing file or a format of the wrong kind re-shows the form with the reason."""
    dataset = dataset_for("mmooc", "mmooc")
    client = _client(lead)
    url = reverse("annotation:dataset_import", args=[dataset.pk])
    missing = client.post(url, {"format": "mmooc", "source_kind": "upload"})
    assert missing.status_code == 400
    assert "Give this for the source you chose." in missing.content.decode()
    wrong = client.post(
        url, {"format": "trimodal", "source_kind": "s3_prefix", "s3_url": "s3://b/p"}
    )
    assert wrong.status_code == 400 and "holds Image-question" in wrong.content.decode()
    assert ImportJob.objects.count() == 0


def test_the_server_path_is_offered_only_where_a_folder_is_open(lead: Any, settings: Any) -> None:
    """With no IMPORT_SERVER_ROOTS nobody may import from the server's disk: the form offers
    neither the source nor its path, and a post naming it is refused; with a root both are
    there. Every source's input says which source it belongs to."""
    dataset = dataset_for("mmooc", "mmooc")
    url = reverse("annotation:dataset_import", args=[dataset.pk])
    settings.IMPORT_SERVER_ROOTS = []
    closed = _client(lead).get(url).content.decode()
    assert 'value="server_path"' not in closed and 'name="path"' not in closed
    assert 'data-source="upload"' in closed and 'data-source="s3_prefix"' in closed
    refused = _client(lead).post(url, {"format": "mmooc", "source_kind": "server_path"})
    assert refused.status_code == 400 and ImportJob.objects.count() == 0
    settings.IMPORT_SERVER_ROOTS = ["/srv/data"]
    open_ = _client(lead).get(url).content.decode()
    assert 'value="server_path"' in open_ and 'data-source="server_path"' in open_


def test_error_report_downloads_as_csv(lead: Any, tmp_path: Path) -> None:
    """The CSV has row, external_id and message, and never starts a cell with a formula."""
    job = _bad_job(tmp_path)
    response = _client(lead).get(reverse("annotation:import_job_errors_csv", args=[job.pk]))
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(b"".join(streamed(response)).decode())))
    assert rows[0] == ["row", "external_id", "message"]
    assert [r[:2] for r in rows[1:]] == [["2", "mm-2"], ["3", ""]]
    assert "not an option letter" in rows[1][2] and "not valid JSON" in rows[2][2]
    assert all(not cell.startswith("=") for row in rows for cell in row)


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_error_report_neutralises_formula_cells(lead: Any, tmp_path: Path, start: str) -> None:
    """An external id or message that begins like a formula (= + - @ tab CR) is written with a
    leading apostrophe, so a spreadsheet shows it as text."""
    job = _bad_job(tmp_path)
    ImportRowError.objects.create(job=job, row=9, external_id=f"{start}id", message=f"{start}m")
    response = _client(lead).get(reverse("annotation:import_job_errors_csv", args=[job.pk]))
    text = b"".join(streamed(response)).decode()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[-1] == ["9", f"'{start}id", f"'{start}m"]


def test_job_page_takes_a_fixed_number_of_queries(
    lead: Any, tmp_path: Path, django_assert_max_num_queries: Any
) -> None:
    """The job page costs the same number of queries whatever the number of errors."""
    job = run_import(
        dataset_for("mmooc", "mmooc"),
        "mmooc",
        write_lines(tmp_path / "m.jsonl", [mmooc_record(n, answer="Z") for n in range(60)]),
    )
    client = _client(lead)
    with django_assert_max_num_queries(6):
        page = client.get(reverse("annotation:import_job", args=[job.pk]))
    assert page.content.decode().count("not one of the options") == 60


@pytest.mark.django_db(transaction=True)
@pytest.mark.browser
def test_job_page_shows_progress_live_in_a_browser(
    live_server: Any, lead: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lead watching a queued job sees it finish, with its counts and error rows, unaided."""
    from playwright.sync_api import expect

    # Playwright's sync API runs an event loop in this thread; the ORM calls here are sync.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    dataset = dataset_for("mmooc", "mmooc")
    path = write_lines(tmp_path / "m.jsonl", [mmooc_record(1), mmooc_record(2, answer="Z")])
    job = import_job_of(dataset, "mmooc", path)
    with chromium() as browser:
        context = browser.new_context()
        sign_in(context, live_server.url, lead)
        page = context.new_page()
        page.goto(live_server.url + reverse("annotation:import_job", args=[job.pk]))
        status = page.locator('[data-field="status_label"]')
        expect(status).to_have_text("Queued")
        import_services.import_job_run(job_id=job.pk)
        expect(status).to_have_text("Finished with errors", timeout=15_000)
        # Its own badge colour (amber), not the neutral one of a running job.
        expect(status).to_have_attribute("data-status", "succeeded_with_errors")
        expect(status).to_have_css("background-color", "rgb(254, 243, 199)")
        expect(page.locator('[data-field="imported"]')).to_have_text("1")
        expect(page.locator("#import-progress")).to_have_attribute("value", "100")
        expect(page.locator("#import-errors tbody tr")).to_have_count(1)
        expect(page.locator("#import-errors tbody")).to_contain_text("not one of the options")
    assert ImportJob.objects.get(pk=job.pk).status == ImportJobStatus.SUCCEEDED_WITH_ERRORS


@pytest.mark.django_db(transaction=True)
@pytest.mark.browser
def test_the_form_shows_only_the_chosen_sources_input(
    live_server: Any, lead: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a browser the upload's file input is shown alone; choosing S3 shows the prefix in
    its place."""
    from playwright.sync_api import expect

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.IMPORT_SERVER_ROOTS = ["/srv/data"]
    dataset = dataset_for("mmooc", "mmooc")
    with chromium() as browser:
        context = browser.new_context()
        sign_in(context, live_server.url, lead)
        page = context.new_page()
        page.goto(live_server.url + reverse("annotation:dataset_import", args=[dataset.pk]))
        expect(page.locator("input[name=file]")).to_be_visible()
        expect(page.locator("input[name=path]")).to_be_hidden()
        expect(page.locator("input[name=s3_url]")).to_be_hidden()
        expect(page.locator("input[name=dataset_file]")).to_be_visible()
        page.check("input[name=source_kind][value=s3_prefix]")
        expect(page.locator("input[name=s3_url]")).to_be_visible()
        expect(page.locator("input[name=file]")).to_be_hidden()


@needs_logicvista
def test_defect_11_the_job_page_reports_near_duplicates_from_an_empty_site(
    tmp_path: Path, lead: Any
) -> None:
    """A file holding a real image twice (the second time re-encoded as JPEG, its question in
    capitals, under a new id): the job page lists the pair, the sample list's filter finds both
    samples, and the pair's page shows them side by side."""
    original = sorted((LOGICVISTA / "images").glob("*.png"))[0].read_bytes()
    out = io.BytesIO()
    with Image.open(io.BytesIO(original)) as image:
        image.convert("RGB").save(out, format="JPEG", quality=70)
    question = "What is written on the sign? (A) Stop (B) Go (C) none of the above"
    write_lines(
        tmp_path / "mmooc.jsonl",
        [
            mmooc_record(1, question_id="lv-1", image=b64(original), question=question),
            mmooc_record(2),
            mmooc_record(
                3, question_id="lv-1-copy", image=b64(out.getvalue()), question=question.upper()
            ),
        ],
    )
    job = run_import(dataset_for("mmooc", "mmooc"), "mmooc", tmp_path)
    assert job.imported == 3
    client = _client(lead)
    page = client.get(reverse("annotation:import_job", args=[job.pk])).content.decode()
    table = text(element(page, "table", id="import-duplicates"))
    assert "lv-1" in table and "lv-1-copy" in table and "mm-2" not in table
    assert "This import brought 1 sample that looks like one stored before it" in text(
        element(page, id="import-duplicates-count")
    )
    listed = client.get(
        reverse("annotation:sample_list", args=[job.dataset_id]), {"duplicates": "true"}
    ).content.decode()
    assert "2 samples match." in listed
    pair = job.duplicate_pairs.get()
    side = client.get(reverse("annotation:duplicate_pair", args=[job.dataset_id, pair.pk]))
    assert side.status_code == 200
    body = side.content.decode()
    assert "image/png" in body and "image/jpeg" in body
