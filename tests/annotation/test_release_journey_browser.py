"""From an empty site to a downloaded release, in real headless Chromium, with no admin and no
shell: a lead creates a dataset, uploads a LogicVista zip built from the shared data, adds two
annotators on the members page, sets k = 2, sends every imported sample to review; both
annotators review by keyboard; the lead adjudicates the disagreement, searches the sample list,
takes two samples down, exports a snapshot and downloads it. The database then shows that no
field nobody edited has changed and that the corrected category is kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.forms.models import model_to_dict

from annotation.models import Dataset, Sample, SampleStatus
from review.models import Review
from tests.annotation.factories import UserFactory
from tests.annotation.test_journey_browser import ITEMS, log_in, logicvista_zip, page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.postgres,
    pytest.mark.shared_data,
    pytest.mark.django_db(transaction=True),
]
__all__ = ["page"]  # the Chromium page fixture, shared with the first journey

# What each reviewer does with each of the first four LogicVista items.
UNTOUCHED, CORRECTED, REJECTED, DISPUTED = "v1_287", "v1_289", "v1_288", "v1_290"
CORRECTION = "inductive"
PLAN = {
    UNTOUCHED: ("accept", "accept"),
    CORRECTED: ("correct", "correct"),
    REJECTED: ("reject", "reject"),
    DISPUTED: ("accept", "reject"),
}
# Matches the questions of exactly UNTOUCHED and REJECTED ("Two FruitBars cost", "will cost").
SEARCH = "cost"
WAIT = 60000


def _content(sample: Sample) -> dict[str, Any]:
    """A sample's stored fields other than those the journey moves on purpose (its status) and
    the revision counter that every write advances."""
    values = model_to_dict(sample)
    for moved in ("status", "revision", "id"):
        values.pop(moved, None)
    return values


def _review_all(page: Any, base: str, dataset: Dataset, reviewer: Any, turn: int) -> list[str]:
    """Review every sample the queue hands out, by keyboard only; the external ids seen."""
    page.context.clear_cookies()
    log_in(page, base, reviewer)
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-review")
    page.click("#start-review")
    seen: list[str] = []
    while "/review/samples/" in page.url:
        page.wait_for_selector("#submit-next")
        heading = page.locator("h1").inner_text().strip()
        external_id = next(e for e in PLAN if heading.startswith(e))
        seen.append(external_id)
        action = PLAN[external_id][turn]
        page.locator("body").focus()
        if action == "correct":
            page.keyboard.press("c")  # focuses the category field (free text: no terms)
            page.keyboard.press("Control+a")
            page.keyboard.type(CORRECTION)
            page.keyboard.press("Escape")
            page.keyboard.press("a")
        elif action == "accept":
            page.keyboard.press("a")
        else:
            page.keyboard.press("i")  # reject as invalid
        current = page.url
        page.keyboard.press("Control+Enter")
        page.wait_for_url(lambda url, current=current: url != current, timeout=WAIT)
    return seen


def test_from_an_empty_site_to_a_downloaded_release(
    live_server: Any, live_worker: Any, page: Any, tmp_path: Path
) -> None:
    """Only users exist at the start; the import and the export run in a real Celery worker."""
    lead = UserFactory.create(role="lead")
    first, second = UserFactory.create(role="annotator"), UserFactory.create(role="annotator")
    assert not Dataset.objects.exists() and not Sample.objects.exists()
    upload, external_ids = logicvista_zip(tmp_path / "logicvista.zip")
    assert sorted(external_ids) == sorted(PLAN)
    base = live_server.url

    # The lead creates the dataset and uploads the zip.
    log_in(page, base, lead)
    page.goto(f"{base}/datasets/")
    page.click("a[href='/datasets/new/']")
    page.fill("#id_name", "LogicVista")
    page.select_option("#id_kind", "image_question")
    page.click("main form [type=submit]")
    page.wait_for_url("**/datasets/*/")
    dataset = Dataset.objects.get(name="LogicVista")
    page.click("nav.journey a.button")  # "Import samples"
    page.select_option("#id_format", "logicvista")
    page.set_input_files("#id_file", str(upload))
    page.click("main form [type=submit]")
    page.wait_for_url("**/imports/*/")
    page.wait_for_function(
        "document.querySelector('[data-status]').dataset.status === 'succeeded'", timeout=WAIT
    )
    imported = {s.external_id: _content(s) for s in Sample.objects.filter(dataset=dataset)}
    assert len(imported) == ITEMS

    # Members, k = 2, and everything imported sent to review: all from the dataset page.
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-members")
    for annotator in (first, second):
        page.fill("#id_username", annotator.username)
        page.click("#member-add [type=submit]")
        page.wait_for_selector(f"#members td:text-is('{annotator.username}')")
    assert set(dataset.members.values_list("pk", flat=True)) == {first.pk, second.pk}
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-review")
    page.fill("#id_overlap", "2")
    page.click(".settings-form [type=submit]")
    page.wait_for_load_state()
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#next-send-to-review")
    page.click("#bulk-confirm")
    page.wait_for_selector(f"text={ITEMS} samples sent to review")
    assert not Sample.objects.filter(dataset=dataset, status=SampleStatus.IMPORTED).exists()

    # Both annotators review every sample by keyboard.
    assert sorted(_review_all(page, base, dataset, first, 0)) == sorted(PLAN)
    assert sorted(_review_all(page, base, dataset, second, 1)) == sorted(PLAN)
    assert Review.objects.filter(dataset=dataset).count() == 2 * ITEMS
    statuses = dict(Sample.objects.filter(dataset=dataset).values_list("external_id", "status"))
    assert statuses == {
        UNTOUCHED: SampleStatus.VERIFIED,
        CORRECTED: SampleStatus.VERIFIED,
        REJECTED: SampleStatus.REJECTED,
        DISPUTED: SampleStatus.NEEDS_ADJUDICATION,
    }

    # The lead adjudicates the disagreement from the dataset page's next steps.
    page.context.clear_cookies()
    log_in(page, base, lead)
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#next-adjudicate")
    page.click(f"a:text-is('{DISPUTED}')")
    page.check("input[name=decision][value=accept]")
    page.fill("textarea[name=note]", "The image supports the question.")
    page.click("main form.card button[type=submit]")
    page.wait_for_load_state()
    assert Sample.objects.get(external_id=DISPUTED).status == SampleStatus.VERIFIED

    # Search the sample list and take down the two matching samples.
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-samples")
    page.fill("input[name=search]", SEARCH)
    page.click("#apply-filter")
    page.wait_for_selector("text=2 samples match.")
    page.locator("input[name=ids]").first.check()
    page.locator("input[name=ids]").nth(1).check()
    page.select_option("#bulk-scope", "selected")
    page.select_option("#bulk-action", "take_down")
    page.fill("#bulk-reason", "Licence withdrawn")
    page.click("#bulk-submit")
    assert "Take down 2 of the 2 selected samples?" in page.locator("#bulk-question").inner_text()
    page.click("#bulk-confirm")
    page.wait_for_url("**/samples/**")
    removed = Sample.objects.filter(dataset=dataset, status=SampleStatus.REMOVED)
    assert set(removed.values_list("external_id", flat=True)) == {UNTOUCHED, REJECTED}

    # Export a snapshot of the verified samples and download it.
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click(f"a[href='/datasets/{dataset.pk}/snapshots/']")
    page.fill("#id_name", "release-1")
    page.select_option("#id_format", "jsonl")
    page.click("main form [type=submit]")
    page.wait_for_selector("a.button:has-text('Download')", timeout=WAIT)
    with page.expect_download() as download:
        page.click("a.button:has-text('Download')")
    rows = [
        json.loads(line)
        for line in Path(download.value.path()).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    by_id = {row["external_id"]: row for row in rows}
    assert set(by_id) == {CORRECTED, DISPUTED}
    assert by_id[CORRECTED]["category_code"] == CORRECTION

    # Nothing that nobody edited has changed; the corrected category is kept.
    for sample in Sample.objects.filter(dataset=dataset):
        expected = dict(imported[sample.external_id])
        if sample.external_id == CORRECTED:
            assert expected["category_code"] != CORRECTION
            expected["category_code"] = CORRECTION
            # The content hash follows the content it is computed from.
            assert sample.content_hash != expected["content_hash"]
            expected["content_hash"] = sample.content_hash
        assert _content(sample) == expected, sample.external_id
