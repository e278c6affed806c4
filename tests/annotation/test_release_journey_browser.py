"""From an empty site to a downloaded release, in real headless Chromium, with no admin and no
shell: a lead creates a dataset, uploads a LogicVista zip built from the shared data, adds two
annotators on the members page, sets k = 2, sends every imported sample to review; both
annotators review by keyboard; the lead adjudicates the disagreement, searches the sample list,
takes two samples down, exports a snapshot and downloads it. The database then shows that no
field nobody edited has changed and that the corrected category is kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from annotation.models import Sample, SampleStatus
from review.models import Review
from tests.annotation.journey_steps import (
    adjudicate_untouched,
    content,
    export_and_download,
    lead_and_two_annotators,
    lead_imports_logicvista,
    open_review,
    review_all,
    search_and_take_down,
)
from tests.annotation.test_journey_browser import ITEMS, JOURNEY_MARKS, logicvista_zip, page
from tests.support.browser import log_in

pytestmark = JOURNEY_MARKS
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


def _reviewer(turn: int) -> Callable[[Any, str], None]:
    """What the first (turn 0) or second reviewer does with each sample, by keyboard only."""

    def act(page: Any, heading: str) -> None:
        external_id = next(e for e in PLAN if heading.startswith(e))
        action = PLAN[external_id][turn]
        if action == "correct":
            page.keyboard.press("c")  # focuses the category field (free text: no terms)
            page.keyboard.press("Control+a")
            page.keyboard.type(CORRECTION)
            page.keyboard.press("Escape")
        page.keyboard.press("i" if action == "reject" else "a")  # i rejects as invalid

    return act


def test_from_an_empty_site_to_a_downloaded_release(
    live_server: Any, live_worker: Any, page: Any, tmp_path: Path
) -> None:
    """Only users exist at the start; the import and the export run in a real Celery worker."""
    lead, first, second = lead_and_two_annotators()
    upload, external_ids = logicvista_zip(tmp_path / "logicvista.zip")
    assert sorted(external_ids) == sorted(PLAN)
    base = live_server.url

    dataset = lead_imports_logicvista(page, base, lead, upload)
    imported = {s.external_id: content(s) for s in Sample.objects.filter(dataset=dataset)}
    assert len(imported) == ITEMS

    # Members, k = 2, and everything imported sent to review: all from the dataset page.
    assert open_review(page, base, dataset, (first, second), k=2) == ITEMS
    assert set(dataset.members.values_list("pk", flat=True)) == {first.pk, second.pk}
    assert not Sample.objects.filter(dataset=dataset, status=SampleStatus.IMPORTED).exists()

    # Both annotators review every sample by keyboard.
    for turn, reviewer in enumerate((first, second)):
        seen = review_all(page, base, dataset, reviewer, _reviewer(turn))
        assert sorted(h.split()[0] for h in seen) == sorted(PLAN)
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
    adjudicate_untouched(page, base, dataset, DISPUTED)
    assert Sample.objects.get(external_id=DISPUTED).status == SampleStatus.VERIFIED

    # Search the sample list and take down the two matching samples.
    search_and_take_down(page, base, dataset, SEARCH, 2)
    removed = Sample.objects.filter(dataset=dataset, status=SampleStatus.REMOVED)
    assert set(removed.values_list("external_id", flat=True)) == {UNTOUCHED, REJECTED}

    # Export a snapshot of the verified samples and download it.
    release = export_and_download(page, base, dataset, "release-1", "jsonl")
    rows = [
        json.loads(line)
        for line in release.read_text(encoding="utf-8").splitlines()
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
        assert content(sample) == expected, sample.external_id
