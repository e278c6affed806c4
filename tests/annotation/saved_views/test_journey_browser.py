"""A saved view in real headless Chromium, from an empty site with real LogicVista items: a
lead imports 30 items, takes one down, selects a page and then every sample of the list, filters
it three ways and sorts it, chooses and orders the columns (by keyboard) and the page size, and
saves the list as a shared view; another lead opens the view from the list and sees the same
rows and columns in the same order, on a 390 px phone without sideways scrolling too, in English
and in Chinese."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from annotation.models import SavedView
from tests.annotation.factories import UserFactory
from tests.annotation.journey_steps import (
    lead_and_two_annotators,
    lead_imports_logicvista,
    search_and_take_down,
)
from tests.annotation.test_journey_browser import JOURNEY_MARKS, logicvista_zip, page
from tests.mmooc_site.test_phone_and_dark_browser import MEASURE, PHONE
from tests.support.browser import log_in

pytestmark = JOURNEY_MARKS
__all__ = ["page"]  # the Chromium page fixture, shared with the first journey

ITEMS = 30
# Four of the first items speak of journals; the fifth journal's is taken down.
JOURNALS = ["v1_295", "v1_294", "v1_293"]  # by external id, descending
# Ticked in the chooser's order, the format then moved up five places by keyboard.
COLUMNS = ["external_id", "question_format", "status", "reference_answer"]
HEADERS_JS = "() => [...document.querySelectorAll('th[data-column]')].map(th => th.dataset.column)"
ROWS_JS = (
    "() => [...document.querySelectorAll('main tbody tr td a[href*=\"/samples/\"]')]"
    ".map(a => a.textContent.trim())"
)


def _shown(page: Any) -> tuple[list[str], list[str]]:
    return page.evaluate(HEADERS_JS), page.evaluate(ROWS_JS)


def _move_by_keyboard(page: Any, label: str, way: str, times: int) -> None:
    """Tab to a column's move button and press it: the focus stays on it as it moves."""
    button = page.locator(f"#column-order button[aria-label='Move “{label}” {way}']")
    button.focus()
    for n in range(times):
        page.keyboard.press("Enter" if n % 2 else "Space")
    assert button.evaluate("b => b === document.activeElement")


def _select_every_matching_sample(page: Any) -> None:
    """With 25 a page: the header box ticks the page, the list then offers all 30."""
    page.click("#select-page")
    assert page.locator("input[name=ids]:checked").count() == 25
    page.wait_for_selector("#page-selected", state="visible")
    page.click("#select-all-matching")
    assert page.locator("#bulk-scope").input_value() == "all"
    assert "All 30 matching samples are selected." in page.locator("#all-selected").inner_text()
    assert page.locator("#page-selected").is_hidden()
    page.click("#clear-selection")
    assert page.locator("#bulk-scope").input_value() == "selected"
    assert page.locator("input[name=ids]:checked").count() == 0
    page.locator("input[name=ids]").nth(3).check()
    assert page.locator("#select-page").evaluate("box => box.indeterminate")


def test_a_lead_saves_a_view_that_another_lead_opens(
    live_server: Any, live_worker: Any, page: Any, tmp_path: Path
) -> None:
    lead, _first, _second = lead_and_two_annotators()
    other = UserFactory.create(role="lead")
    base = live_server.url
    upload, ids = logicvista_zip(tmp_path / "logicvista.zip", ITEMS)
    assert ids[6:10] == ["v1_293", "v1_294", "v1_295", "v1_296"]
    dataset = lead_imports_logicvista(page, base, lead, upload)
    search_and_take_down(page, base, dataset, "fifth journal", 1)

    # The columns and page size, chosen on the unfiltered list and kept.
    page.goto(f"{base}/datasets/{dataset.pk}/samples/")
    page.click("#column-chooser summary")
    for box in page.locator(
        "#layout-form input[type=checkbox][name=columns]:not([disabled])"
    ).all():
        box.set_checked(box.get_attribute("value") in COLUMNS)
    _move_by_keyboard(page, "Question format", "up", 5)
    assert page.locator("#column-order-status").inner_text() == (
        "Question format is now column 5 of 15."
    )
    page.select_option("#page-size", "25")
    with page.expect_navigation():
        page.click("#layout-keep")
    page.wait_for_selector("text=30 samples match.")
    assert _shown(page)[0] == COLUMNS and len(_shown(page)[1]) == 25
    _select_every_matching_sample(page)

    # Three filters and a sort, saved as a shared view.
    page.fill("input[name=search]", "journal")
    page.select_option("#sample-filter select[name=status]", "imported")
    page.select_option("#sample-filter select[name=category]", "deductive")
    page.select_option("#sample-filter select[name=ordering]", "-external_id")
    page.click("#apply-filter")
    page.wait_for_selector("text=3 samples match.")
    assert _shown(page) == (COLUMNS, JOURNALS)
    page.fill("#view-name", "Journals to check")
    page.check("#view-shared")
    page.click("#view-save")
    page.wait_for_selector("text=View “Journals to check” saved.")
    view = SavedView.objects.get(dataset=dataset)
    assert (view.owner, view.shared, view.columns, view.page_size) == (lead, True, COLUMNS, 25)
    assert dict(parse_qsl(view.query)) == {
        "search": "journal",
        "status": "imported",
        "category": "deductive",
        "ordering": "-external_id",
    }

    # The other lead: their own list shows the default columns; the view its own.
    page.context.clear_cookies()
    log_in(page, base, other)
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-samples")
    page.wait_for_selector("text=30 samples match.")
    assert _shown(page)[0] != COLUMNS
    page.click("#view-links a:text-is('Journals to check')")
    page.wait_for_selector("text=3 samples match.")
    assert _shown(page) == (COLUMNS, JOURNALS)
    assert f"by {lead.username}" in page.locator("#view-links").inner_text()
    assert page.locator("#view-update").count() == 0
    opened = page.url

    # The same view on a phone, in both languages: nothing scrolls sideways but the table.
    page.set_viewport_size(PHONE)
    for language in ("en", "zh-hans"):
        page.context.add_cookies([{"name": "django_language", "value": language, "url": base}])
        page.goto(opened)
        page.wait_for_load_state()
        assert _shown(page) == (COLUMNS, JOURNALS)
        measured = page.evaluate(MEASURE)
        assert measured["lang"] == language
        assert measured["width"] <= PHONE["width"], (language, measured["width"])
        for box in measured["boxes"]:
            assert box["hint"] == box["overflows"], (language, measured["boxes"])
