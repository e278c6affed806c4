"""In real Chromium, in English and in Chinese: the leaderboard of an MMOOC dataset and of one
of real LogicVista items shows every score, in the table, its breakdowns and the chart, with
its 95 % interval (only a figure on one response has none, and says so), and only the
dataset's own groups: no MMOOC group with n=0 on LogicVista."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import reverse

from annotation.models import Sample
from core import roles
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af
from tests.judging.factories import logicvista_dataset
from tests.support.browser import chromium_page, log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM calls between Playwright steps

pytestmark = [
    pytest.mark.browser,
    pytest.mark.shared_data,
    pytest.mark.django_db(transaction=True),
]

MODELS = ("gpt-4o", "qwen3-vl")
INTERVAL = re.compile(r"\[\d\.\d{3}, \d\.\d{3}\]")
# Each score the page shows: the table's cells (breakdowns opened) and the chart's labels,
# with the interval's method, its text and the n behind it.
SCORES = """() => {
  for (const details of document.querySelectorAll('main details')) details.open = true;
  const cells = [...document.querySelectorAll('main .score-ci')].map(span => ({
    where: 'table', method: span.dataset.ciMethod, text: span.innerText.trim(), n: span.dataset.n,
  }));
  const bars = [...document.querySelectorAll('main svg text[data-n]')].map(text => ({
    where: 'chart', method: text.dataset.ciMethod, text: text.textContent.trim(), n: text.dataset.n,
  }));
  return {
    scores: [...cells, ...bars],
    headers: [...document.querySelectorAll('main table.wide thead th')]
      .map(th => th.innerText.trim()),
    text: document.querySelector('main').innerText,
    lang: document.documentElement.lang,
  };
}"""
ONE_RESPONSE = {"en": "no interval: one response", "zh-hans": "无区间：仅一个回答"}
NO_GROUP = {"en": "no group", "zh-hans": "无分组"}


@pytest.fixture
def lead() -> Any:
    return UserFactory.create(role=roles.LEAD)


@pytest.fixture
def page(lead: Any, live_server: Any) -> Iterator[Any]:
    with chromium_page() as page:
        log_in(page, live_server.url, lead)
        yield page


def _scores(page: Any, base: str, dataset_id: int, language: str) -> dict[str, Any]:
    page.context.add_cookies([{"name": "django_language", "value": language, "url": base}])
    page.goto(f"{base}{reverse('judging:leaderboard', args=[dataset_id])}")
    page.wait_for_load_state()
    found: dict[str, Any] = page.evaluate(SCORES)
    assert found["lang"] == language
    return found


def _every_score_has_its_interval(found: dict[str, Any], language: str) -> None:
    assert {score["where"] for score in found["scores"]} == {"table", "chart"}, found["scores"]
    for score in found["scores"]:
        if score["n"] == "1":
            assert ONE_RESPONSE[language] in score["text"], score
            continue
        assert score["method"] in ("wilson", "wilson_effective_n"), score
        assert INTERVAL.search(score["text"]), score


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_an_mmooc_leaderboard_gives_every_score_its_interval_and_its_two_groups(
    live_server: Any, page: Any, lead: Any, language: str
) -> None:
    dataset, _judges = af.scoring_dataset(n_samples=12, models=MODELS)
    af.add_member(dataset, lead)
    found = _scores(page, live_server.url, dataset.pk, language)
    _every_score_has_its_interval(found, language)
    # Overall, then the two answerability groups of MMOOC; every group holds responses.
    assert found["headers"][3:] == ["shifted_ic", "ooc"], found["headers"]
    assert "(n=0)" not in found["text"]
    chart = [s["text"] for s in found["scores"] if s["where"] == "chart"]
    assert len(chart) == len(MODELS) * 2, chart


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_logicvista_leaderboard_shows_its_own_group_only_each_score_with_its_interval(
    live_server: Any, page: Any, lead: Any, language: str
) -> None:
    dataset = logicvista_dataset(limit=12)
    samples = list(Sample.objects.filter(dataset=dataset).order_by("pk"))
    assert len(samples) == 12 and not any(s.answerability_group for s in samples)
    af.scoring_dataset(models=MODELS, dataset=dataset, samples=samples)
    af.add_member(dataset, lead)
    found = _scores(page, live_server.url, dataset.pk, language)
    _every_score_has_its_interval(found, language)
    # LogicVista's items have no answerability group: one "no group" column, no MMOOC group.
    assert found["headers"][3:] == [NO_GROUP[language]], found["headers"]
    for stray in ("shifted_ic", "ooc", "(n=0)"):
        assert stray not in found["text"], stray
    chart = [s["text"] for s in found["scores"] if s["where"] == "chart"]
    assert len(chart) == len(MODELS), chart
    assert all(text.startswith(NO_GROUP[language]) for text in chart), chart
