"""From an empty site to the first review, in real headless Chromium, with no admin and no
shell: a lead creates a dataset, uploads a LogicVista zip built from the shared data, sends
every imported sample to review from the sample list, and an annotator claims one."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation.models import Dataset, Sample, SampleRevision, SampleStatus
from review.models import Slot
from tests.annotation.factories import UserFactory
from tests.conftest import SHARED_DATA
from tests.support.browser import chromium_page, log_in

# Playwright's sync API runs an event loop in this thread; the ORM calls below are plain
# synchronous calls between browser steps.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

# The marks of every journey test: a browser over real services and the shared data.
JOURNEY_MARKS = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.postgres,
    pytest.mark.shared_data,
    pytest.mark.django_db(transaction=True),
]
pytestmark = JOURNEY_MARKS
LOGICVISTA = SHARED_DATA / "logicvista"
ITEMS = 4


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def logicvista_zip(target: Path, n: int = ITEMS) -> tuple[Path, list[str]]:
    """A zip of the first n real LogicVista items: dataset.json and their images."""
    items = json.loads((LOGICVISTA / "dataset.json").read_text(encoding="utf-8"))
    chosen = dict(list(items.items())[:n])
    with zipfile.ZipFile(target, "w") as archive:
        archive.writestr("dataset.json", json.dumps(chosen))
        for item in chosen.values():
            name = item["imagename"]
            archive.write(LOGICVISTA / "images" / name, f"images/{name}")
    return target, list(chosen)


def test_a_lead_sends_an_upload_to_review_and_an_annotator_claims_a_sample(
    live_server: Any, live_worker: Any, page: Any, tmp_path: Path
) -> None:
    """Only users exist at the start; the import runs in a real Celery worker process."""
    lead = UserFactory.create(role="lead")
    annotator = UserFactory.create(role="annotator")
    assert not Dataset.objects.exists() and not Sample.objects.exists()
    upload, external_ids = logicvista_zip(tmp_path / "logicvista.zip")
    base = live_server.url

    log_in(page, base, lead)
    page.goto(f"{base}/datasets/")
    page.click("a[href='/datasets/new/']")
    page.fill("#id_name", "LogicVista")
    page.select_option("#id_kind", "image_question")
    page.click("main form [type=submit]")
    page.wait_for_url("**/datasets/*/")
    dataset = Dataset.objects.get(name="LogicVista")
    assert page.locator("text=This dataset has no samples yet.").count() == 1

    page.click("nav.journey a.button")  # "Import samples"
    page.select_option("#id_format", "logicvista")
    page.set_input_files("#id_file", str(upload))
    page.click("main form [type=submit]")
    page.wait_for_url("**/imports/*/")
    # The job page polls the job's status until the worker has finished.
    page.wait_for_function(
        "() => document.querySelector('[data-status]').dataset.status === 'succeeded'",
        timeout=60000,
    )
    assert Sample.objects.filter(dataset=dataset, status=SampleStatus.IMPORTED).count() == ITEMS

    # The lead adds the annotator from the browser session, through the API.
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    added = page.request.post(
        f"{base}/api/datasets/{dataset.pk}/members/",
        data={"username": annotator.username},
        headers={"X-CSRFToken": token, "Referer": base},
    )
    assert added.status == 204

    page.goto(f"{base}/datasets/{dataset.pk}/")
    assert page.locator(f"text={ITEMS} imported samples are not in review:").count() == 1
    page.click("#link-samples")
    assert page.locator(f"text={ITEMS} samples match.").count() == 1
    page.select_option("#bulk-scope", "all")
    page.select_option("#bulk-action", "send_to_review")
    page.click("#bulk-submit")
    question = page.locator("#bulk-question").inner_text()
    assert f"Send {ITEMS} of the {ITEMS} selected samples to review?" in question
    page.click("#bulk-confirm")
    page.wait_for_url("**/samples/**")
    assert page.locator(f"text={ITEMS} samples sent to review").count() == 1
    assert not Sample.objects.filter(status=SampleStatus.IMPORTED).exists()
    assert Slot.objects.filter(dataset=dataset).count() == 2 * ITEMS
    moves = SampleRevision.objects.filter(
        sample__dataset=dataset, after={"status": "pending_review"}
    )
    assert moves.count() == ITEMS and {m.changed_by_id for m in moves} == {lead.pk}

    page.context.clear_cookies()
    log_in(page, base, annotator)
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-review")
    page.click("#start-review")
    page.wait_for_url("**/review/samples/*/")
    heading = page.locator("h1").inner_text().strip()
    leased = Slot.objects.get(reviewer=annotator, done=False)
    assert leased.sample.external_id in external_ids
    assert heading.startswith(leased.sample.external_id)
