"""In real Chromium: switch the interface to Chinese, review a sample by keyboard, and find every
label, button and shortcut hint in Chinese while the sample's data stays as imported."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from review.models import Review
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset
from tests.support.browser import choose_in_menu, chromium_page

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM calls between Playwright steps

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CJK = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# Words that are the same in both languages: product and format names, codes, key names.
SAME_IN_BOTH = {"MMOOC", "API", "Ctrl", "Enter", "Shift", "Esc", "Tab", "JSON", "ID", "kappa"}

# Interface text of the workbench: labels, buttons, headings, legends, hints and navigation.
UI_ELEMENTS = "label, button, legend, th, h1, h2, h3, nav a, .hint, .keys li, summary"


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium_page(locale="en-GB") as page:
        yield page


def _english_leftovers(page: Any, data: set[str]) -> list[str]:
    """Interface texts with English words and no Chinese, data values and key names aside."""
    leftovers = []
    for element in page.query_selector_all(UI_ELEMENTS):
        if not element.is_visible():
            continue
        text = element.inner_text().strip()
        for kbd in element.query_selector_all("kbd"):
            text = text.replace(kbd.inner_text(), " ")
        for value in data:
            text = text.replace(value, " ")
        words = [w for w in LATIN_WORD.findall(text) if w not in SAME_IN_BOTH]
        if words and not CJK.search(text):
            leftovers.append(text)
    return leftovers


def test_review_in_chinese_by_keyboard(live_server: Any, page: Any) -> None:
    """After switching to Chinese, every label, button and key hint of the workbench is
    Chinese, the sample's text is unchanged, and a keyboard review is saved."""
    reviewer = UserFactory.create(role="annotator")
    dataset = review_dataset(1, k=1, members=[reviewer])
    sample = dataset.samples.get()

    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", reviewer.username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("form [type=submit]")
    assert page.locator("html").get_attribute("lang") == "en"
    choose_in_menu(page, "#language-select", "zh-hans")
    page.wait_for_function("() => document.documentElement.lang === 'zh-hans'")

    page.goto(f"{live_server.url}/review/datasets/{dataset.pk}/")
    page.click("#start-review")
    page.wait_for_url(f"**/review/samples/{sample.pk}/")
    assert page.locator("html").get_attribute("lang") == "zh-hans"

    # The data shows exactly as imported, untranslated.
    body = page.inner_text("body")
    assert sample.question in body and sample.explanation in body
    data = {sample.question, sample.explanation, sample.reference_answer, sample.external_id}
    data |= {option["text"] for option in sample.options}
    data |= {sample.category_code, sample.scenario}  # codes in the title are data too
    data |= {dataset.name, reviewer.username}
    assert _english_leftovers(page, data) == []
    assert page.locator("kbd").count() >= 5  # shortcut hints are shown beside the labels

    page.keyboard.press("a")
    page.keyboard.press("3")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "() => document.body.innerText.length > 0 && !location.pathname.endsWith("
        f"'/review/samples/{sample.pk}/')"
    )
    review = Review.objects.get(sample=sample, reviewer=reviewer)
    assert (review.decision, review.clarity) == ("accept", 3)
    assert page.locator("html").get_attribute("lang") == "zh-hans"
