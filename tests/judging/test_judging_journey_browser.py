"""The judges' and the auditor's journey (issue 13), in real headless Chromium at 1,440 × 900
with a real Celery worker, from a site with users only: the lead imports LogicVista, uploads
three real answer files on the judging page and watches the import jobs finish, adds a judge on
the fake OpenAI endpoint and tests it, runs the rule judge and that judge (two of whose calls
the endpoint refuses), sees the job end "finished with errors", opens the leaderboard from the
job, makes the auditor a member, plans and draws an audit from the dataset page; the auditor
finds it on their home page, rates its items and opens its statistics, computed by the worker,
which fit the window in English and in Chinese."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation.models import Dataset, Sample
from core import roles
from judging.models import AuditItem, AuditRating, AuditSet, Judge, ModelResponse, Verdict
from tests.annotation.factories import UserFactory
from tests.annotation.journey_steps import WAIT, lead_imports_logicvista
from tests.annotation.test_journey_browser import JOURNEY_MARKS, LOGICVISTA, logicvista_zip
from tests.conftest import worker_on
from tests.judging.factories import rule_judge
from tests.judging.test_pages_fit_browser import MEASURE, WIDTH
from tests.support.browser import choose_in_menu, chromium, log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM calls between Playwright steps

pytestmark = JOURNEY_MARKS  # a browser, Redis, PostgreSQL and the shared data

ITEMS = 20  # the first LogicVista items, with their images
ANSWERS = ("GPT4", "LLAVA7B", "BLIP2")  # answers/<name>-answers.json
AUDIT_SIZE = 4
FAILED_CALLS = 2  # the fake endpoint answers the judge's first calls 400, which is final


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": WIDTH, "height": 900})
        yield context.new_page()
        context.close()


def _wait_status(page: Any, selector: str, statuses: tuple[str, ...]) -> str:
    """Wait until the page's job (its data-status, which the page keeps current) reaches one
    of `statuses`; the status reached."""
    page.wait_for_function(
        "([selector, statuses]) => statuses.includes("
        "document.querySelector(selector).dataset.status)",
        arg=[selector, list(statuses)],
        timeout=WAIT,
    )
    return str(page.locator(selector).get_attribute("data-status"))


def _upload_answers(page: Any, name: str) -> None:
    """On the judging page: upload one answer file, follow its import job to its end, and go
    back to the judging page by the job page's link."""
    page.select_option("#upload-form select[name=kind]", "responses")
    page.select_option("#upload-form select[name=format]", "logicvista")
    page.set_input_files(
        "#upload-form input[name=file]", str(LOGICVISTA / "answers" / f"{name}-answers.json")
    )
    page.click("#upload-form [type=submit]")
    page.wait_for_url("**/imports/*/")
    # The answer files cover all 161 items: rows of items not imported are rejected.
    status = _wait_status(page, "#import-job", ("succeeded", "succeeded_with_errors", "failed"))
    assert status == "succeeded_with_errors", status
    assert page.locator("#import-progress").get_attribute("value") == "100"
    assert page.locator("[data-field=imported]").inner_text() == str(ITEMS)
    page.click("text=Imports of LogicVista")
    page.wait_for_url("**/judging/")


def _add_and_test_judge(page: Any, base_url: str) -> Judge:
    """From the judging page's link to the judges: add a judge on the fake endpoint and press
    its Test button; the page shows the answer once the worker has made the call."""
    page.click(".heading a:text-is('Judges')")
    page.fill("#judge-add input[name=name]", "fake")
    page.fill("#judge-add input[name=base_url]", base_url)
    page.fill("#judge-add input[name=model]", "fake-judge")
    page.click("#judge-add [type=submit]")
    judge = Judge.objects.get(name="fake")
    page.locator(f"#judge-{judge.pk} .judge-test-button").click()
    page.locator(f"#judge-{judge.pk} .test-ok").wait_for(timeout=WAIT)
    assert "Answered in" in page.locator(f"#judge-{judge.pk} .judge-test").inner_text()
    return judge


def _run_job(page: Any, judges: list[Judge]) -> str:
    """Start a scoring job of `judges` on the judging page; wait on the job's page for its
    end; its status."""
    page.select_option("#id_task", "scoring")
    for judge in judges:
        page.check(f"input[name=judges][value='{judge.pk}']")
    page.click("form:has(#id_task) [type=submit]")
    page.wait_for_url("**/judge-jobs/*/")
    return _wait_status(page, "#job-progress", ("succeeded", "with_errors", "failed", "cancelled"))


def _plan_and_draw(page: Any, base: str, dataset: Dataset) -> AuditSet:
    """From the dataset page's "Audits" link: preview the plan (a GET), then draw it."""
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("nav.journey >> text=Audits")
    page.click("text=New audit set")
    page.select_option("select[name=task]", "scoring")
    page.fill("input[name=size]", str(AUDIT_SIZE))
    page.fill("input[name=floor]", "1")
    page.fill("input[name=double_rating_fraction]", "0")
    page.fill("input[name=name]", "journey")
    page.click("#preview")
    # The job's end queued a recount of the strata: until the worker has it, the page says a
    # worker is counting and reloads by itself.
    page.wait_for_selector("#allocation-table", timeout=WAIT)
    assert "csrfmiddlewaretoken" not in page.url and f"size={AUDIT_SIZE}" in page.url
    page.click("#draw")
    page.wait_for_url("**/audits/*/")
    # The worker draws; the page follows the draw and reloads when it is done.
    page.wait_for_selector("#start-rating", timeout=WAIT)
    page.wait_for_function("() => document.getElementById('draw-status') === null", timeout=WAIT)
    audit_set = AuditSet.objects.get(dataset=dataset, name="journey")
    assert audit_set.status == "succeeded", audit_set.message
    return audit_set


def _rate_all(page: Any, audit_set: AuditSet) -> int:
    """Rate every item of the audit set by keyboard; how many were rated."""
    page.click("#start-rating")
    items = list(AuditItem.objects.filter(audit_set=audit_set).order_by("position"))
    for item in items:
        page.wait_for_url(f"**/audit-items/{item.pk}/rate/")
        page.keyboard.press("1")  # answer right
        page.keyboard.press("w")  # reasoning 0.5
        page.keyboard.press("Enter")
    page.wait_for_url(f"**/audits/{audit_set.pk}/")
    return len(items)


def _fits(page: Any, language: str) -> None:
    measured = page.evaluate(MEASURE)
    assert measured["lang"] == language
    assert measured["width"] <= WIDTH, (language, measured["width"])
    assert measured["tooNarrow"] == [] and measured["tooTall"] == [], (language, measured)
    assert measured["smallText"] == [], (language, measured["smallText"][:5])


def test_the_judges_and_the_auditors_journey(
    live_server: Any, page: Any, fake_openai: Any, tmp_path: Path
) -> None:
    lead = UserFactory.create(role=roles.LEAD)
    auditor = UserFactory.create(role=roles.AUDITOR)
    rule = rule_judge()  # the built-in judge, made by a data migration on a real site
    assert not Dataset.objects.exists() and not Verdict.objects.exists()
    upload, _ids = logicvista_zip(tmp_path / "logicvista.zip", n=ITEMS)
    base = live_server.url
    with fake_openai(latency=0.02) as server, worker_on(os.environ["REDIS_URL"]):
        dataset = lead_imports_logicvista(page, base, lead, upload)
        assert Sample.objects.filter(dataset=dataset).count() == ITEMS

        # Three answer files, uploaded on the judging page, each imported by the worker.
        page.goto(f"{base}/datasets/{dataset.pk}/")
        page.click("nav.journey >> text=Judging")
        for name in ANSWERS:
            _upload_answers(page, name)
        for name in ANSWERS:
            assert page.locator(f"text={name}: {ITEMS} responses").count() == 1
        assert ModelResponse.objects.filter(dataset=dataset).count() == ITEMS * len(ANSWERS)

        judge = _add_and_test_judge(page, server.base_url)
        assert len(server.probe_records()) == 1

        # The rule judge and the fake judge score every response; two calls are refused.
        server.queue_faults(*["bad_request"] * FAILED_CALLS)
        page.goto(f"{base}/datasets/{dataset.pk}/")
        page.click("nav.journey >> text=Judging")
        assert _run_job(page, [rule, judge]) == "with_errors"
        assert "Finished with errors" in page.inner_text("#job-progress")
        assert page.locator("[data-field=errors]").inner_text().strip() == str(FAILED_CALLS)
        assert page.is_visible("#job-links") and not page.is_visible("#job-cancel")
        pairs = ITEMS * len(ANSWERS)
        assert Verdict.objects.filter(judge=rule, error_kind="").count() == pairs
        assert Verdict.objects.filter(judge=judge, error_kind="").count() == pairs - FAILED_CALLS
        page.click("#job-links a")
        page.wait_for_url(f"**/datasets/{dataset.pk}/leaderboard/")

        # The lead makes the auditor a member, then plans and draws the audit.
        page.goto(f"{base}/datasets/{dataset.pk}/")
        page.click("#link-members")
        page.fill("#id_username", auditor.username)
        page.click("#member-add [type=submit]")
        page.wait_for_selector(f"#members td:text-is('{auditor.username}')")
        audit_set = _plan_and_draw(page, base, dataset)
        assert audit_set.items.count() == AUDIT_SIZE

        # The auditor finds the audit on their home page, rates it, opens its statistics.
        page.context.clear_cookies()
        log_in(page, base, auditor)
        page.goto(f"{base}/")
        waiting = page.locator("[data-audit-waiting]")
        assert waiting.get_attribute("data-audit-waiting") == str(AUDIT_SIZE)
        page.click(".audit-work a:text-is('journey')")
        assert _rate_all(page, audit_set) == AUDIT_SIZE
        assert AuditRating.objects.filter(item__audit_set=audit_set).count() == AUDIT_SIZE
        page.click("form >> text=Statistics")
        page.wait_for_url(f"**/audits/{audit_set.pk}/statistics/")
        # The ratings queued a computation; the page reloads itself until the worker is done.
        page.wait_for_function(
            "() => document.getElementById('computed-state').textContent"
            ".includes('Computed by a worker at') && !document.getElementById('computing')",
            timeout=WAIT,
        )
        assert f"{AUDIT_SIZE} rated" in page.inner_text("main")
        _fits(page, "en")

        choose_in_menu(page, "#language-select", "zh-hans")
        page.wait_for_function("() => document.documentElement.lang === 'zh-hans'")
        page.wait_for_load_state()
        assert page.url.endswith(f"/audits/{audit_set.pk}/statistics/")
        _fits(page, "zh-hans")
