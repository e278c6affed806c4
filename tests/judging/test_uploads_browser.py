"""The lead's judging journey in real headless Chromium, with a real Celery worker: a real
LogicVista answer file uploaded on the judging page imports as a job whose progress the page
follows to its end, and a judge added in the browser answers its Test against the fake
OpenAI endpoint."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from judging.models import Judge, ModelResponse
from tests.annotation.factories import UserFactory
from tests.annotation.test_journey_browser import JOURNEY_MARKS
from tests.conftest import worker_on
from tests.judging.factories import LOGICVISTA, logicvista_dataset
from tests.support.browser import CHROMIUM_ARGS, log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = JOURNEY_MARKS  # a browser, Redis, PostgreSQL and the shared data


@pytest.fixture
def page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        yield context.new_page()
        context.close()
        browser.close()


def test_a_lead_uploads_an_answer_file_and_adds_and_tests_a_judge(
    live_server: Any, page: Any, fake_openai: Any
) -> None:
    lead = UserFactory.create(role="lead")
    dataset = logicvista_dataset()
    base = live_server.url
    with fake_openai(latency=0.05) as server, worker_on(os.environ["REDIS_URL"]):
        log_in(page, base, lead)
        page.goto(f"{base}/datasets/{dataset.pk}/judging/")
        assert page.locator("text=No model responses imported yet.").count() == 1
        page.select_option("#upload-form select[name=kind]", "responses")
        page.select_option("#upload-form select[name=format]", "logicvista")
        page.set_input_files(
            "#upload-form input[name=file]", str(LOGICVISTA / "answers" / "GPT4-answers.json")
        )
        page.click("#upload-form [type=submit]")
        page.wait_for_url("**/imports/*/")
        # The job page polls the job until the worker has finished it.
        page.wait_for_function(
            "() => document.querySelector('#import-job').dataset.status"
            " === 'succeeded_with_errors'",
            timeout=60000,
        )
        assert page.locator("#import-progress").get_attribute("value") == "100"
        assert page.locator("[data-field=imported]").inner_text() == "160"
        assert "v1_382" in page.locator("#import-errors").inner_text()  # not a sample
        assert ModelResponse.objects.filter(dataset=dataset, model_name="GPT4").count() == 160
        page.click("text=Imports of logicvista")
        assert page.locator("text=GPT4: 160 responses").count() == 1

        page.goto(f"{base}/judges/")
        page.fill("#judge-add input[name=name]", "fake")
        page.fill("#judge-add input[name=base_url]", server.base_url)
        page.fill("#judge-add input[name=model]", "fake-judge")
        page.click("#judge-add [type=submit]")
        judge = Judge.objects.get(name="fake")
        row = page.locator(f"#judge-{judge.pk}")
        row.locator(".judge-test-button").click()
        # The page polls the test until the worker has made the call, then shows it.
        page.locator(f"#judge-{judge.pk} .test-ok").wait_for(timeout=60000)
        cell = page.locator(f"#judge-{judge.pk} .judge-test").inner_text()
        assert "Answered in" in cell and "answer_score" in cell
        assert len(server.probe_records()) == 1
