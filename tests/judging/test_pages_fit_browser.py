"""In real Chromium at 1,440 × 900: the audit's statistics page, its printable report and the
leaderboard fit the window in English and in Chinese, with many judges and models.

Wide tables scroll inside their own box (the page itself never gets wider than the window),
header cells never shrink to a character per line, and chart text is at least 11 px as drawn.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import reverse

from core import roles
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af
from tests.support.browser import chromium

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM calls between Playwright steps

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH = 1440
JUDGES = tuple(
    f"{family}-judge-{size}"
    for family, size in [
        ("gpt-4o-2024-11-20", "large"),
        ("qwen2.5-vl-72b-instruct", "large"),
        ("claude-3-7-sonnet", "large"),
        ("gemini-2.0-flash", "small"),
        ("llama-3.2-90b-vision", "large"),
        ("internvl2.5-78b", "large"),
        ("deepseek-vl2", "small"),
        ("pixtral-large-2411", "large"),
    ]
)
MODELS = (
    "gpt-4o-mini-2024-07-18",
    "qwen2.5-vl-7b-instruct",
    "llava-onevision-qwen2-72b-ov",
    "minicpm-v-2_6",
    "phi-3.5-vision-instruct",
    "idefics3-8b-llama3",
)

# Everything the test measures, in the page: the page's width, header cells too narrow or
# too tall, and chart text drawn below 11 px (font size times the SVG's scale).
MEASURE = """() => {
  const tooNarrow = [], tooTall = [], smallText = [];
  for (const th of document.querySelectorAll('th')) {
    const text = th.innerText.trim();
    if (!text || th.offsetParent === null) continue;
    const style = getComputedStyle(th);
    const size = parseFloat(style.fontSize);
    const line = parseFloat(style.lineHeight) || size * 1.5;
    const inner = th.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const lines = Math.round((th.clientHeight - parseFloat(style.paddingTop)
                              - parseFloat(style.paddingBottom)) / line);
    const chars = [...text].length;
    if (chars >= 2 && inner < 2 * size - 0.5) {
      tooNarrow.push(text + ' (' + inner.toFixed(0) + ' px, ' + style.wordBreak + ')');
    }
    // A cell spanning rows is tall by its rows, not by wrapping.
    if (th.rowSpan === 1 && lines > 3 && lines >= chars / 2) {
      tooTall.push(text + ' (' + lines + ' lines)');
    }
  }
  for (const node of document.querySelectorAll('svg text')) {
    const svg = node.ownerSVGElement;
    const box = svg.viewBox.baseVal;
    const scale = box && box.width ? svg.getBoundingClientRect().width / box.width : 1;
    const drawn = parseFloat(getComputedStyle(node).fontSize) * scale;
    if (drawn < 11 - 0.01) smallText.push(node.textContent.trim() + ' ' + drawn.toFixed(1));
  }
  return {
    width: document.documentElement.scrollWidth,
    tooNarrow, tooTall, smallText,
    svgs: document.querySelectorAll('svg text').length,
    lang: document.documentElement.lang,
  };
}"""


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as browser:
        yield browser


def _page(browser: Any, live_server: Any, user: Any, language: str) -> Any:
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page = context.new_page()
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("form [type=submit]")
    page.wait_for_load_state()
    return page


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_statistics_report_and_leaderboard_fit_a_1440_px_window(
    live_server: Any, browser: Any, language: str
) -> None:
    """Eight judges with long names, six models, a rated audit with double ratings."""
    dataset, _judges = af.scoring_dataset(n_samples=40, models=MODELS, judge_names=JUDGES)
    auditors = [UserFactory.create(role=roles.AUDITOR) for _ in range(2)]
    for auditor in auditors:
        af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=60, double_rating_fraction=0.25)
    af.rate_all(audit_set, auditors)
    page = _page(browser, live_server, auditors[0], language)
    urls = {
        "statistics": reverse("judging:audit_statistics", args=[audit_set.pk]),
        "report": reverse("judging:audit_report", args=[audit_set.pk]),
        "leaderboard": reverse("judging:leaderboard", args=[dataset.pk]),
    }
    for name, url in urls.items():
        page.goto(f"{live_server.url}{url}")
        page.wait_for_load_state()
        measured = page.evaluate(MEASURE)
        assert measured["lang"] == language, name
        assert measured["svgs"] > 0, name
        assert measured["width"] <= WIDTH, (name, language, measured["width"])
        assert measured["tooNarrow"] == [], (name, language, measured["tooNarrow"][:5])
        assert measured["tooTall"] == [], (name, language, measured["tooTall"][:5])
        assert measured["smallText"] == [], (name, language, measured["smallText"][:5])
    # The wide tables are still whole: they scroll inside their box, not cut off.
    page.goto(f"{live_server.url}{urls['statistics']}")
    scrolls = page.evaluate(
        "() => [...document.querySelectorAll('.scroll-box')]"
        ".filter(b => b.scrollWidth > b.clientWidth).length"
    )
    assert scrolls >= 1
