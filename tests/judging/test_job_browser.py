"""A judge job's page in real headless Chromium: while the job runs, its failed calls appear
without a reload; once it ends, Cancel goes and the links to its results and Retry appear."""

from __future__ import annotations

import os
from typing import Any

import pytest

from annotation.models import Sample
from core import roles
from judging import services
from judging.models import JudgeJob, Verdict
from tests.annotation.factories import UserFactory
from tests.judging.test_audit_browser import page  # noqa: F401 - the Chromium page fixture
from tests.judging.test_views import _running_job_with_an_error

# Playwright's sync API runs an event loop in this thread; the ORM calls below are plain
# synchronous calls between browser steps.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_errors_table_updates_live_and_cancel_goes_when_the_job_ends(
    live_server: Any,
    page: Any,  # noqa: F811
) -> None:
    job = _running_job_with_an_error()
    lead = UserFactory.create(role=roles.LEAD)
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", lead.username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("form [type=submit]")
    page.goto(f"{live_server.url}/judge-jobs/{job.pk}/")
    assert page.is_visible("#job-cancel") and not page.is_visible("#job-links")
    assert page.locator("#recent-errors tr").count() == 1

    # A second failed call arrives while the page is open: it shows without a reload.
    verdict = Verdict.objects.get(job=job, error_kind="timeout")
    other = Sample.objects.create(dataset=job.dataset, external_id="late", question="Late?")
    Verdict.objects.filter(pk=verdict.pk).update(error_kind="server_error")
    Verdict.objects.create(
        judge=verdict.judge,
        task=job.task,
        prompt_version="v1",
        job=job,
        sample=other,
        error_kind="server_error",
        error="The judge answered 500.",
    )
    page.wait_for_function("() => document.querySelectorAll('#recent-errors tr').length === 2")
    assert "The judge answered 500." in page.inner_text("#recent-errors")
    # The counts may come one poll later than the rows (the rows can be read between the two
    # writes above): wait for them as for the rows, never assume the same poll.
    page.wait_for_function(
        "() => document.querySelector('#error-counts').innerText.includes('server_error')"
    )
    assert page.is_visible("#job-cancel")

    services.judge_job_end(job=JudgeJob.objects.get(pk=job.pk))
    page.wait_for_selector("#job-cancel", state="hidden")
    page.wait_for_selector("#job-links", state="visible")
    assert page.is_visible("#job-retry")
    assert "Finished with errors" in page.inner_text("#job-progress")
    page.click("#job-links a")
    page.wait_for_url(f"**/datasets/{job.dataset_id}/leaderboard/")
