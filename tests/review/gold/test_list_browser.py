"""Gold items in bulk in real headless Chromium, from an empty site with real LogicVista items:
a lead imports six, an annotator reviews three (k = 1 verifies them), the lead ticks those and
one still in review on the sample list and marks them as gold (the unverified one is refused),
a second annotator is served two of the gold items and answers one wrongly, and the lead opens
the gold items from the dataset page and reads each one's accuracy, filters the sample list by
gold, and unmarks one item in bulk; the gold items read in Chinese too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.utils import translation
from django.utils.translation import gettext

from annotation.models import Sample, SampleStatus
from review.gold import services as gold
from review.models import GoldAnswer, GoldItem, Slot
from tests.annotation.journey_steps import (
    lead_and_two_annotators,
    lead_imports_logicvista,
    open_review,
    review_all,
)
from tests.annotation.test_journey_browser import JOURNEY_MARKS, logicvista_zip, page
from tests.review.gold.test_services import AlwaysGold
from tests.support.browser import choose_in_menu, log_in

pytestmark = JOURNEY_MARKS
__all__ = ["page"]  # the Chromium page fixture, shared with the first journey
ITEMS = 6


def _accept(page: Any, heading: str) -> None:
    page.keyboard.press("a")


def test_a_lead_marks_gold_in_bulk_lists_it_with_accuracy_and_filters_by_it(
    live_server: Any,
    live_worker: Any,
    page: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lead, first, second = lead_and_two_annotators()
    upload, _external_ids = logicvista_zip(tmp_path / "logicvista.zip", n=ITEMS)
    base = live_server.url

    dataset = lead_imports_logicvista(page, base, lead, upload)
    assert open_review(page, base, dataset, (first, second), k=1) == ITEMS
    assert len(review_all(page, base, dataset, first, _accept, limit=3)) == 3
    verified = list(
        Sample.objects.filter(dataset=dataset, status=SampleStatus.VERIFIED).order_by("pk")
    )
    assert len(verified) == 3
    waiting = Sample.objects.filter(dataset=dataset).exclude(status=SampleStatus.VERIFIED).first()
    assert waiting is not None

    # The lead ticks the three verified samples and one still in review, and marks them gold.
    page.context.clear_cookies()
    log_in(page, base, lead)
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-samples")
    for sample in [*verified, waiting]:
        page.check(f"input[name=ids][value='{sample.pk}']")
    page.click("#bulk-form button:has-text('Mark as gold')")
    page.wait_for_selector("text=3 samples marked as gold items.")
    refused = f"1 sample is not verified and was not marked: {waiting.external_id}."
    assert page.locator(f"text={refused}").is_visible()
    assert sorted(GoldItem.objects.values_list("sample_id", flat=True)) == [s.pk for s in verified]
    assert page.locator("[data-testid=gold-cell] .badge").count() == 3

    # Gold items at 50 % of the claims: the second annotator is served two of them first and
    # rejects the second, which was expected to be accepted.
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-review")
    page.fill("#id_gold_percent", "50")
    page.click(".settings-form [type=submit]")
    page.wait_for_load_state()
    answered: list[str] = []

    def second_acts(page: Any, heading: str) -> None:
        answered.append(heading)
        page.keyboard.press("a" if len(answered) == 1 else "i")  # i rejects as invalid

    monkeypatch.setattr(gold, "_rng", AlwaysGold())
    assert len(review_all(page, base, dataset, second, second_acts, limit=2)) == 2
    matched = dict(GoldAnswer.objects.values_list("sample_id", "matched"))
    assert matched == {verified[0].pk: True, verified[1].pk: False}
    served_third = Slot.objects.filter(sample=verified[2], gold=True).count()

    # The lead opens the gold items from the dataset page: each with its accuracy.
    page.context.clear_cookies()
    log_in(page, base, lead)
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-gold")
    page.wait_for_url(f"**/review/datasets/{dataset.pk}/gold/items/")
    rows = page.locator("main tbody tr")
    assert rows.count() == 3

    def accuracy(sample: Sample) -> str:
        row = page.locator(f"tr[data-sample='{sample.external_id}']")
        return str(row.locator("[data-testid=gold-accuracy]").inner_text()).strip()

    assert accuracy(verified[0]) == "1 / 1 (100 %)"
    assert accuracy(verified[1]) == "0 / 1 (0 %)"
    assert accuracy(verified[2]) == ("0 / 1 (0 %)" if served_third else "not served yet")
    page.screenshot(path="/tmp/review-screenshots/gold-list.png", full_page=True)

    # The sample list filtered by gold: the three items, then the three others.
    page.click("#link-gold-samples")
    page.wait_for_selector("text=3 samples match.")
    assert page.locator("#filter-gold").input_value() == "true"
    page.select_option("#filter-gold", "false")
    page.click("#apply-filter")
    page.wait_for_url("**gold=false**")
    assert page.locator("#match-count").inner_text() == "3 samples match."
    assert page.locator("[data-testid=gold-cell] .badge").count() == 0
    page.select_option("#filter-gold", "true")
    page.click("#apply-filter")
    page.wait_for_url("**gold=true**")
    listed = page.locator("main tbody tr a").all_inner_texts()
    assert sorted(listed) == sorted(s.external_id for s in verified)

    # One item unmarked in bulk from the filtered list, which keeps its filter.
    page.check(f"input[name=ids][value='{verified[1].pk}']")
    page.click("#bulk-form button:has-text('Unmark gold')")
    page.wait_for_selector("text=1 sample is no longer a gold item.")
    assert "gold=true" in page.url
    assert page.locator("#match-count").inner_text() == "2 samples match."
    assert not GoldItem.objects.filter(sample=verified[1]).exists()
    assert not GoldAnswer.objects.filter(sample=verified[1]).exists()
    page.screenshot(path="/tmp/review-screenshots/gold-filtered.png", full_page=True)

    # The gold items in Chinese: every header and the accuracy as the catalogue has them.
    page.goto(f"{base}/review/datasets/{dataset.pk}/gold/items/")
    english = page.locator("main th").all_inner_texts()
    choose_in_menu(page, "#language-select", "zh-hans")
    page.wait_for_function("() => document.documentElement.lang === 'zh-hans'")
    page.wait_for_load_state()
    with translation.override("zh-hans"):
        assert page.locator("main th").all_inner_texts() == [gettext(h) for h in english]
    assert "准确率" in page.locator("main th").all_inner_texts()
    assert accuracy(verified[0]) == "1 / 1（100 %）"
