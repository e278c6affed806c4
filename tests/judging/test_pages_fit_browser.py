"""In real Chromium at 1,440 × 900: the audit's statistics page, its printable report and the
leaderboard fit the window in English and in Chinese, with many judges and models; and on a
390 × 844 phone, light and dark, the statistics' wide tables scroll in their box with a hint
that shows only while a table overflows.

Wide tables scroll inside their own box (the page itself never gets wider than the window),
header cells never shrink to a character per line, and chart text is at least 11 px as drawn.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from core import roles
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af
from tests.support.browser import chromium, sign_in

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


PHONE = {"width": 390, "height": 844}
HINT = {"en": "Scroll sideways for more →", "zh-hans": "横向滚动查看更多 →"}
# Each table's scroll box: whether its table overflows, whether its hint is drawn, inside the
# box, in what words, and the contrast of its text against the box's colour (WCAG's ratio).
HINTS = """() => {
  const rgb = (colour) => (colour.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
  const luminance = (c) => {
    const [r, g, b] = c.map(v => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  return {
    lang: document.documentElement.lang,
    width: document.documentElement.scrollWidth,
    boxes: [...document.querySelectorAll('.scroll-box')]
      .filter(b => b.offsetParent !== null && b.querySelector(':scope > .scroll-hint'))
      .map(b => {
        const hint = b.querySelector(':scope > .scroll-hint');
        const r = hint.getBoundingClientRect(), outer = b.getBoundingClientRect();
        const words = document.createRange();
        words.selectNodeContents(hint);
        // The box's right edge carries a shadow .9rem wide while more lies that way.
        const shadow = 0.9 * parseFloat(getComputedStyle(document.documentElement).fontSize);
        return {
          clearOfShadow: outer.left + b.clientWidth - words.getBoundingClientRect().right >= shadow,
          overflows: b.scrollWidth > b.clientWidth,
          shown: hint.offsetParent !== null && r.height > 0,
          inside: r.left >= outer.left - 0.5 && r.right <= outer.left + b.clientWidth + 0.5,
          text: hint.textContent.trim(),
          contrast: contrast(rgb(getComputedStyle(hint).color),
                             rgb(getComputedStyle(b).backgroundColor)),
        };
      }),
  };
}"""


def _hints(page: Any) -> dict[str, Any]:
    # The hint follows the box's widths once the page has laid it out again (a resize): wait
    # until it does, or fail below on the boxes as they are.
    settled = """() => [...document.querySelectorAll('.scroll-box > .scroll-hint')].every(h =>
      (h.parentElement.scrollWidth > h.parentElement.clientWidth) === (h.offsetParent !== null))"""
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(settled, timeout=5000)
    measured: dict[str, Any] = page.evaluate(HINTS)
    return measured


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_statistics_on_a_phone_scroll_wide_tables_in_their_box_with_a_readable_hint(
    live_server: Any, browser: Any, language: str
) -> None:
    """At 390 × 844, light and dark: the page never scrolls sideways; each table that
    overflows its box shows the hint, inside the box and readable (contrast 4.5 or more), and
    a table that fits shows none, there and at 1,440 px."""
    dataset, _judges = af.scoring_dataset(n_samples=12, models=("gpt-4o",), seed=3)
    auditors = [UserFactory.create(role=roles.AUDITOR) for _ in range(2)]
    for auditor in auditors:
        af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=10, floor=0, double_rating_fraction=0.2)
    af.rate_all(audit_set, auditors, seed=1)
    url = f"{live_server.url}{reverse('judging:audit_statistics', args=[audit_set.pk])}"
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=PHONE, color_scheme=scheme)
        context.add_cookies(
            [{"name": "django_language", "value": language, "url": live_server.url}]
        )
        sign_in(context, live_server.url, auditors[0])
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("main svg[role=img] text")
        for width in (PHONE["width"], WIDTH):
            page.set_viewport_size({"width": width, "height": PHONE["height"]})
            where = (language, scheme, width)
            measured = _hints(page)
            assert measured["lang"] == language, where
            assert measured["width"] <= width, (*where, measured["width"])
            boxes = measured["boxes"]
            assert any(box["overflows"] for box in boxes), (*where, boxes)
            for box in boxes:
                assert box["shown"] == box["overflows"], (*where, box)
                if box["shown"]:
                    assert box["inside"] and box["text"] == HINT[language], (*where, box)
                    assert box["clearOfShadow"], (*where, box)
                    assert box["contrast"] >= 4.5, (*where, box)
        # At 1,440 px the small tables fit: their hint is not drawn.
        assert any(not box["overflows"] for box in boxes), (language, scheme, boxes)
        context.close()
