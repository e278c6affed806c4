"""The lead's sample page after a judge job (issue 29), in real headless Chromium with a real
Celery worker, from a site with users only: the lead imports LogicVista from the shared data,
uploads GPT-4's real answers, adds a judge on the fake OpenAI endpoint, scores the responses
with it and the rule judge, then opens one sample from the dataset's sample list and reads the
model's response, each judge's verdict with its reason and the judges' consensus."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from annotation.models import Sample
from core import roles
from judging.models import ModelResponse, Verdict
from tests.annotation.factories import UserFactory
from tests.annotation.journey_steps import lead_imports_logicvista
from tests.annotation.test_journey_browser import JOURNEY_MARKS, logicvista_zip
from tests.conftest import worker_on
from tests.judging.factories import rule_judge
from tests.judging.test_judging_journey_browser import (
    ITEMS,
    _add_and_test_judge,
    _run_job,
    _upload_answers,
    page,  # noqa: F401 (the fixture: Chromium at the journey's width)
)
from tests.judging.test_pages_fit_browser import WIDTH

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM calls between Playwright steps

pytestmark = JOURNEY_MARKS  # a browser, Redis, PostgreSQL and the shared data

MODEL = "GPT4"  # answers/GPT4-answers.json


def test_the_lead_reads_responses_and_verdicts_on_the_sample_page(
    live_server: Any,
    page: Any,  # noqa: F811
    fake_openai: Any,
    tmp_path: Path,
) -> None:
    lead = UserFactory.create(role=roles.LEAD)
    rule = rule_judge()
    upload, _ids = logicvista_zip(tmp_path / "logicvista.zip", n=ITEMS)
    base = live_server.url
    with fake_openai(latency=0.01) as server, worker_on(os.environ["REDIS_URL"]):
        dataset = lead_imports_logicvista(page, base, lead, upload)
        page.goto(f"{base}/datasets/{dataset.pk}/")
        page.click("nav.journey >> text=Judging")
        _upload_answers(page, MODEL)
        judge = _add_and_test_judge(page, server.base_url)
        page.goto(f"{base}/datasets/{dataset.pk}/")
        page.click("nav.journey >> text=Judging")
        assert _run_job(page, [rule, judge]) == "succeeded"

    # From the dataset's sample list, the lead opens one sample.
    sample = Sample.objects.filter(dataset=dataset).order_by("external_id").first()
    assert sample is not None
    response = ModelResponse.objects.get(sample=sample, model_name=MODEL)
    verdicts = list(Verdict.objects.filter(response=response).select_related("judge"))
    assert {v.judge.name for v in verdicts} == {rule.name, judge.name}
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    page.goto(f"{base}/datasets/{dataset.pk}/samples/")
    page.click(f"td a:text-is('{sample.external_id}')")
    page.wait_for_url(f"**/samples/{sample.pk}/")

    card = page.locator(f"#judging-panel article[data-model='{MODEL}']")
    assert card.locator("h3").inner_text() == MODEL
    shown = " ".join(card.locator(".model-response-text").inner_text().split())
    assert shown == " ".join(response.response.split())
    for verdict in verdicts:
        row = card.locator(f"tr[data-judge='{verdict.judge.name}']")
        assert row.count() == 1, verdict.judge.name
        assert (verdict.rationale or "—") in row.inner_text()
    fake = next(v for v in verdicts if v.judge_id == judge.pk)
    assert fake.rationale.startswith("fake verdict") and fake.overall is not None
    consensus = card.locator("[data-testid=response-consensus]").inner_text()
    assert "Judges’ consensus: score" in consensus and "mean over 2 judges" in consensus
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    assert violations == []
