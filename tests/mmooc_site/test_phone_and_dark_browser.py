"""In real Chromium on a 390 × 844 phone screen: each role's main pages, from a site with real
LogicVista items, never scroll sideways (wide tables scroll in their own box), keep the user
name and "Log out" on screen and every top-bar link on one line, in English and Chinese, light
and dark; and the theme switch keeps a person's choice from one sign-in to the next."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from annotation.models import ImportJob, Sample
from core import roles
from tests.annotation.factories import UserFactory
from tests.annotation.journey_steps import lead_imports_logicvista, open_review
from tests.annotation.test_journey_browser import JOURNEY_MARKS, logicvista_zip
from tests.judging import audit_factories as af
from tests.support.browser import choose_in_menu, chromium, log_in, sign_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM calls between Playwright steps

pytestmark = JOURNEY_MARKS

PHONE = {"width": 390, "height": 844}
# The body's background in each palette (static/css/site.css, --bg).
BACKGROUND = {"light": "rgb(248, 250, 252)", "dark": "rgb(11, 17, 32)"}
# The palette's text colour (--fg), which a chart's labels take.
INK = {"light": "rgb(31, 41, 55)", "dark": "rgb(229, 231, 235)"}
# The audit statistics' charts: their own backdrops, and the fills of their labels (but the
# counts written on a dark mark, white in either scheme).
CHARTS = """() => {
  const charts = [...document.querySelectorAll('main svg[role="img"]')];
  return {
    count: charts.length,
    backgrounds: [...new Set(charts.map(svg => getComputedStyle(svg).backgroundColor))],
    text: [...new Set(charts.flatMap(svg => [...svg.querySelectorAll('text:not(.on-mark)')]
      .map(t => getComputedStyle(t).fill)))],
  };
}"""

# What the test measures in the page: the document's width, the boxes of the user name and
# "Log out", the top-bar links and buttons drawn on more than one line, the body's colour,
# and for each table's scroll box whether it overflows and whether its hint shows.
MEASURE = """() => {
  const box = (selector) => {
    const element = document.querySelector(selector);
    if (!element) return null;
    const r = element.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
  };
  const broken = [];
  for (const item of document.querySelectorAll('.topbar a, .topbar button')) {
    if (item.offsetParent === null) continue;
    const style = getComputedStyle(item);
    const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.5;
    if (item.getBoundingClientRect().height > line * 1.5) broken.push(item.innerText);
  }
  return {
    lang: document.documentElement.lang,
    width: document.documentElement.scrollWidth,
    who: box('.topbar .who'),
    logOut: box('#log-out'),
    broken: broken,
    background: getComputedStyle(document.body).backgroundColor,
    boxes: [...document.querySelectorAll('.scroll-box')].filter(b => b.offsetParent !== null)
      .map(b => ({
        overflows: b.scrollWidth > b.clientWidth,
        hint: b.querySelector(':scope > .scroll-hint').offsetParent !== null,
      })),
  };
}"""


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as browser:
        yield browser


def _on_screen(box: dict[str, float] | None) -> bool:
    return box is not None and box["left"] >= 0 and box["right"] <= PHONE["width"]


def _fits(page: Any, name: str, language: str, scheme: str) -> dict[str, Any]:
    """What MEASURE found, once it is checked."""
    where = (name, language, scheme)
    # The hints are set by the site script after layout: measure two frames later.
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    measured: dict[str, Any] = page.evaluate(MEASURE)
    assert measured["lang"] == language, where
    assert measured["width"] <= PHONE["width"], (*where, measured["width"])
    assert _on_screen(measured["who"]), (*where, measured["who"])
    assert _on_screen(measured["logOut"]), (*where, measured["logOut"])
    assert measured["broken"] == [], (*where, measured["broken"])
    assert measured["background"] == BACKGROUND[scheme], (*where, measured["background"])
    for box in measured["boxes"]:
        assert box["hint"] == box["overflows"], (*where, measured["boxes"])
    return measured


def _visit(page: Any, base: str, url: str) -> None:
    page.goto(f"{base}{url}")
    page.wait_for_load_state()


def test_every_roles_main_pages_fit_a_phone_in_both_languages_light_and_dark(
    live_server: Any, live_worker: Any, browser: Any, tmp_path: Path
) -> None:
    """Lead: datasets, dataset, samples, sample, import form and job; annotator: the queue,
    the workbench and My reviews; auditor: the audit, its rating form and the statistics of
    a rated audit, whose charts follow the colour scheme (no light backdrop in the dark)."""
    base = live_server.url
    lead = UserFactory.create(role=roles.LEAD)
    annotator = UserFactory.create(role=roles.ANNOTATOR)
    auditor = UserFactory.create(role=roles.AUDITOR)
    upload, _ids = logicvista_zip(tmp_path / "logicvista.zip")
    setup = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = setup.new_page()
    dataset = lead_imports_logicvista(page, base, lead, upload)
    open_review(page, base, dataset, [annotator], k=1)
    setup.close()
    sample = Sample.objects.filter(dataset=dataset).order_by("pk").first()
    assert sample is not None and sample.media_links.exists()
    job = ImportJob.objects.get(dataset=dataset)
    judged, _judges = af.scoring_dataset(n_samples=3, models=("gpt-4o",))
    af.add_member(judged, auditor)
    audit_set = af.draw(judged, size=2, double_rating_fraction=0)
    rated_data, _judges = af.scoring_dataset(n_samples=12, models=("gpt-4o",), seed=3)
    af.add_member(rated_data, auditor)
    rated = af.draw(rated_data, size=10, floor=0, double_rating_fraction=0.2)
    af.rate_all(rated, [auditor, UserFactory.create(role=roles.AUDITOR)], seed=1)

    lead_pages = {
        "datasets": reverse("annotation:dataset_list"),
        "dataset": reverse("annotation:dataset_detail", args=[dataset.pk]),
        "samples": reverse("annotation:sample_list", args=[dataset.pk]),
        "sample": reverse("annotation:sample_detail", args=[sample.pk]),
        "import form": reverse("annotation:dataset_import", args=[dataset.pk]),
        "import job": reverse("annotation:import_job", args=[job.pk]),
    }
    for language in ("en", "zh-hans"):
        for scheme in ("light", "dark"):
            context = browser.new_context(viewport=PHONE, color_scheme=scheme)
            context.add_cookies([{"name": "django_language", "value": language, "url": base}])
            page = context.new_page()

            sign_in(context, base, lead)
            for name, url in lead_pages.items():
                _visit(page, base, url)
                _fits(page, name, language, scheme)
            # The sample list's table is wider than the phone: it scrolls in its own box,
            # whose hint says so.
            _visit(page, base, lead_pages["samples"])
            samples = _fits(page, "samples", language, scheme)
            assert {"overflows": True, "hint": True} in samples["boxes"], (language, scheme)

            sign_in(context, base, annotator)
            _visit(page, base, reverse("review:queue", args=[dataset.pk]))
            _fits(page, "queue", language, scheme)
            page.click("#start-review")
            page.wait_for_url("**/review/samples/*/")
            page.wait_for_selector("#submit-next")
            _fits(page, "workbench", language, scheme)
            # An image narrower than its viewer shows the page beside it, not dark bars.
            backdrop = "() => getComputedStyle(document.querySelector('.viewer')).backgroundColor"
            assert page.evaluate(backdrop) == "rgba(0, 0, 0, 0)", (language, scheme)
            _visit(page, base, reverse("review:mine"))
            _fits(page, "my reviews", language, scheme)

            sign_in(context, base, auditor)
            _visit(page, base, reverse("judging:audit_detail", args=[audit_set.pk]))
            _fits(page, "audit", language, scheme)
            page.click("#start-rating")
            page.wait_for_url("**/audit-items/*/rate/")
            _fits(page, "audit rating", language, scheme)
            _visit(page, base, reverse("judging:audit_statistics", args=[rated.pk]))
            page.wait_for_selector("main svg[role=img] text")  # figures computed by the worker
            _fits(page, "statistics", language, scheme)  # its wide tables: hint iff overflow
            body = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
            assert body == BACKGROUND[scheme], (language, scheme, body)
            charts = page.evaluate(CHARTS)
            assert charts["count"] >= 2, (language, scheme, charts)
            assert charts["backgrounds"] == ["rgba(0, 0, 0, 0)"], (language, scheme, charts)
            assert charts["text"] == [INK[scheme]], (language, scheme, charts)
            context.close()


def test_a_chosen_theme_is_drawn_on_the_next_load_and_kept_for_the_user(
    live_server: Any, browser: Any
) -> None:
    """On a light system, dark chosen in the menu: the next page is dark (printed, light), and
    so is every page after the person signs in from a new browser; "follow the system" hands
    back to it."""
    base = live_server.url
    lead = UserFactory.create(role=roles.LEAD)
    context = browser.new_context(viewport=PHONE, color_scheme="light")
    page = context.new_page()
    log_in(page, base, lead)
    _visit(page, base, reverse("annotation:dataset_list"))
    assert page.evaluate(MEASURE)["background"] == BACKGROUND["light"]
    choose_in_menu(page, "#theme-select", "dark")
    page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
    assert page.url == f"{base}{reverse('annotation:dataset_list')}"
    _fits(page, "datasets after the switch", "en", "dark")
    page.emulate_media(media="print")  # paper stays light
    assert page.evaluate(MEASURE)["background"] == BACKGROUND["light"]
    context.close()

    fresh = browser.new_context(viewport=PHONE, color_scheme="light")
    page = fresh.new_page()
    log_in(page, base, lead)
    _visit(page, base, reverse("annotation:dataset_list"))
    assert page.locator("#theme-select").input_value() == "dark"
    _fits(page, "datasets in a new browser", "en", "dark")
    choose_in_menu(page, "#theme-select", "")
    page.wait_for_function("() => !('theme' in document.documentElement.dataset)")
    assert page.evaluate(MEASURE)["background"] == BACKGROUND["light"]
    fresh.close()
