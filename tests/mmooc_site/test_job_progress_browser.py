"""static/js/job-progress.js in real headless Chromium: one script, driven by data attributes,
follows a judge job, a snapshot build and an audit draw from queued to their end (the import
page has its own browser test in tests/annotation/test_imports_views.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from annotation.models import SampleStatus
from annotation.snapshots import services as snapshot_services
from judging import services as judging_services
from judging.audit import services as audit_services
from judging.services import jobs
from tests.annotation.factories import UserFactory, mmooc_sample
from tests.judging import audit_factories as af
from tests.judging.factories import rule_judge
from tests.support.browser import chromium, sign_in

# Playwright's sync API runs an event loop in this thread; the ORM calls below are plain
# synchronous calls between browser steps.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WAIT = 20_000


@pytest.fixture
def lead_page(live_server: Any) -> Iterator[Any]:
    """A signed-in lead's page."""
    with chromium() as browser:
        context = browser.new_context()
        sign_in(context, live_server.url, UserFactory.create(role="lead"))
        yield context.new_page()


def test_a_judge_job_page_follows_the_job_to_its_end(
    live_server: Any, lead_page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Queued, then every count, the bar and the status come from the polled JSON."""
    from playwright.sync_api import expect

    dataset, _ = af.scoring_dataset(n_samples=3, models=("gpt-4o",), judge_names=("gpt-judge",))
    plan = jobs.enqueue_plan
    monkeypatch.setattr(jobs, "enqueue_plan", lambda job_id: None)  # stays queued for now
    job = judging_services.judge_job_start(dataset=dataset, task="scoring", judges=[rule_judge()])
    lead_page.goto(f"{live_server.url}/judge-jobs/{job.pk}/")
    status = lead_page.locator('#job-progress [data-field="status_label"]')
    expect(status).to_have_text("Queued")
    expect(lead_page.locator("#job-progress")).to_have_attribute("data-status", "queued")

    plan(job.pk)  # the worker's task, run here (eager mode)
    expect(status).to_have_text("Succeeded", timeout=WAIT)
    expect(lead_page.locator("#job-progress")).to_have_attribute("data-status", "succeeded")
    expect(lead_page.locator('#job-progress [data-field="done"]')).to_have_text("3")
    expect(lead_page.locator('#job-progress [data-field="total"]')).to_have_text("3")
    expect(lead_page.locator("#job-bar")).to_have_attribute("value", "100")


def test_a_snapshot_page_reloads_once_the_build_has_ended(live_server: Any, lead_page: Any) -> None:
    """The build's count moves on the page; at the end the page shows the download."""
    from playwright.sync_api import expect

    dataset, _ = af.scoring_dataset(n_samples=1, models=("gpt-4o",), judge_names=("gpt-judge",))
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name="v1", format="jsonl", queue=False
    )
    lead_page.goto(f"{live_server.url}/snapshots/{snapshot.pk}/")
    expect(lead_page.locator('#snapshot-progress [data-field="status_label"]')).to_have_text(
        "Queued"
    )
    assert lead_page.locator("a.button:has-text('Download')").count() == 0

    built = snapshot_services.snapshot_build(snapshot_id=snapshot.pk)
    assert built is not None and built.status == "succeeded", built and built.message
    expect(lead_page.locator("a.button:has-text('Download')")).to_be_visible(timeout=WAIT)
    expect(lead_page.locator("#snapshot-progress")).to_have_attribute("data-status", "succeeded")


def test_an_audit_page_reloads_once_the_draw_has_ended(live_server: Any, lead_page: Any) -> None:
    """The notice that the items are being drawn goes away by itself."""
    from playwright.sync_api import expect

    dataset, _ = af.scoring_dataset(n_samples=6, models=("gpt-4o",))
    audit_set = audit_services.audit_set_create(
        dataset=dataset, name="first", task="scoring", size=4, queue=False
    )
    lead_page.goto(f"{live_server.url}/audits/{audit_set.pk}/")
    expect(lead_page.locator("#draw-status")).to_have_attribute("data-status", "queued")

    drawn = audit_services.audit_set_draw_run(audit_set_id=audit_set.pk)
    assert drawn is not None and drawn.status == "succeeded", drawn and drawn.message
    expect(lead_page.locator("#draw-status")).to_have_count(0, timeout=WAIT)
    expect(lead_page.locator("text=4 items")).to_have_count(1)


def test_job_started_is_a_styled_message_that_goes_when_the_job_ends(
    live_server: Any, lead_page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Starting a job from the form says "Job started." in a message box (no list bullet);
    once the job has ended the message is gone from the page."""
    from playwright.sync_api import expect

    from judging.models import JudgeJob

    dataset, _ = af.scoring_dataset(n_samples=2, models=("gpt-4o",), judge_names=("gpt-judge",))
    judge = rule_judge()
    plan = jobs.enqueue_plan
    monkeypatch.setattr(jobs, "enqueue_plan", lambda job_id: None)  # stays queued for now
    lead_page.goto(f"{live_server.url}/datasets/{dataset.pk}/judging/")
    lead_page.select_option("select[name=task]", "scoring")
    lead_page.check(f"input[name=judges][value='{judge.pk}']")
    lead_page.click("form:has(input[name=judges]) [type=submit]")
    lead_page.wait_for_url("**/judge-jobs/*/")
    message = lead_page.locator(".messages li", has_text="Job started.")
    expect(message).to_be_visible()
    bullet = lead_page.evaluate(
        "getComputedStyle(document.querySelector('.messages')).listStyleType"
    )
    assert bullet == "none"
    plan(JudgeJob.objects.get(dataset=dataset).pk)
    expect(lead_page.locator('#job-progress [data-field="status_label"]')).to_have_text(
        "Succeeded", timeout=WAIT
    )
    expect(message).to_have_count(0)
