"""The Reviewers page in real headless Chromium, from an empty site: a lead imports real
LogicVista items, an annotator reviews two (k = 1), the lead marks both as gold and raises k to
2 with gold items at 50 %; the second annotator is served the gold items among their claims
(answering one wrongly), both review the rest, and the lead opens the Reviewers page from the
dataset page, which says the figures are being computed and shows them once the worker has
stored them, and reads each reviewer's figures, in English and in Chinese."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.utils import translation
from django.utils.translation import gettext

from annotation.models import Sample, SampleStatus
from review.gold import services as gold
from review.models import GoldAnswer, GoldItem
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


def test_a_lead_reads_each_reviewers_quality_after_gold_items_were_answered(
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

    # The first annotator reviews two samples, which k = 1 verifies.
    assert len(review_all(page, base, dataset, first, _accept, limit=2)) == 2
    verified = list(Sample.objects.filter(dataset=dataset, status=SampleStatus.VERIFIED))
    assert len(verified) == 2

    # The lead marks both as gold on their pages, then asks for k = 2 and 50 % gold items.
    page.context.clear_cookies()
    log_in(page, base, lead)
    for sample in verified:
        page.goto(f"{base}/samples/{sample.pk}/")
        page.click("#gold-mark")
        page.wait_for_selector("[data-testid=gold-marked]")
    assert GoldItem.objects.filter(dataset=dataset).count() == 2
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-review")
    page.fill("#id_overlap", "2")
    page.fill("#id_gold_percent", "50")
    page.click(".settings-form [type=submit]")
    page.wait_for_load_state()

    # The second annotator is served both gold items first; they reject the second one.
    wrong = max(sample.external_id for sample in verified)

    def second_acts(page: Any, heading: str) -> None:
        page.keyboard.press("i" if heading.startswith(wrong) else "a")  # i rejects as invalid

    monkeypatch.setattr(gold, "_rng", AlwaysGold())
    seen = review_all(page, base, dataset, second, second_acts)
    assert len(seen) == ITEMS
    answers = dict(GoldAnswer.objects.filter(reviewer=second).values_list("sample_id", "matched"))
    assert sorted(answers.values()) == [False, True]
    assert len(review_all(page, base, dataset, first, _accept)) == ITEMS - 2

    # The lead opens the Reviewers page from the dataset page.
    page.context.clear_cookies()
    log_in(page, base, lead)
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-reviewers")
    page.wait_for_url(f"**/review/datasets/{dataset.pk}/reviewers/")
    # Nothing was computed yet: the page says so at once, and shows the figures once the
    # worker has stored them (it follows the computation and reloads by itself).
    assert page.locator("[data-testid=computing]").is_visible()
    page.wait_for_selector("[data-testid=reviewer-summary]", timeout=60_000)
    assert page.locator("[data-testid=computing]").count() == 0
    summary = page.locator("[data-testid=reviewer-summary]")
    row = summary.locator(f"tr[data-reviewer='{second.username}']")
    assert row.locator("td").nth(1).inner_text() == str(ITEMS - 2)
    accuracy = row.locator("[data-testid=gold-accuracy]").inner_text()
    assert accuracy.startswith("0.50") and "n=2" in accuracy, accuracy
    first_row = summary.locator(f"tr[data-reviewer='{first.username}']")
    assert first_row.locator("td").nth(1).inner_text() == str(ITEMS)
    assert page.locator("figure.accuracy-volume svg circle").count() == 1
    kappa = page.locator(
        f"section[data-reviewer='{first.username}'] tr[data-field=decision] td"
    ).nth(4)
    assert second.username in kappa.inner_text() and "n=4" in kappa.inner_text()
    assert page.locator("tr[data-field=scenario]").count() == 0  # LogicVista has none
    page.screenshot(path="/tmp/review-screenshots/reviewers.png", full_page=True)
    english = page.locator("main th").all_inner_texts()

    # The same page in Chinese: every header as the catalogue translates it.
    choose_in_menu(page, "#language-select", "zh-hans")
    page.wait_for_function("() => document.documentElement.lang === 'zh-hans'")
    page.wait_for_load_state()
    assert page.url.endswith(f"/review/datasets/{dataset.pk}/reviewers/")
    with translation.override("zh-hans"):
        assert page.locator("main th").all_inner_texts() == [gettext(h) for h in english]
    headers = summary.locator("th").all_inner_texts()
    assert headers[0] == "审核员" and "每次审核用时中位数（秒）" in headers, headers
    assert (
        "决定"
        in page.locator(f"section[data-reviewer='{first.username}'] tr[data-field=decision] td")
        .nth(0)
        .inner_text()
    )
    page.screenshot(path="/tmp/review-screenshots/reviewers-zh.png", full_page=True)
