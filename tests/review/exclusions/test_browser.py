"""Quality in consensus in real headless Chromium: a lead opens the page from the progress
page, sees a flagged reviewer, excludes them (the sample they verified goes back to review),
and counts them again (verified again)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from annotation.models import Sample, SampleStatus
from review.models import ReviewerExclusion
from tests.annotation.factories import UserFactory
from tests.annotation.test_journey_browser import page
from tests.review.exclusions.test_selectors import answer_gold, thresholds
from tests.review.factories import review_dataset, submit
from tests.support.browser import log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

__all__ = ["page"]


def test_a_lead_excludes_a_flagged_reviewer_and_counts_them_again(
    live_server: Any, page: Any
) -> None:
    lead = UserFactory.create(role="lead")
    careless, careful = UserFactory.create(), UserFactory.create()
    dataset = review_dataset(1)
    thresholds(dataset, 0.7, 4)
    answer_gold(dataset, careless, [True, False, False, False])
    sample = Sample.objects.select_related("dataset").get(
        dataset=dataset, status=SampleStatus.PENDING_REVIEW
    )
    submit(careless, sample)
    submit(careful, Sample.objects.select_related("dataset").get(pk=sample.pk))
    base = live_server.url

    log_in(page, base, lead)
    page.goto(f"{base}/review/datasets/{dataset.pk}/progress/")
    page.click("text=Quality in consensus")
    row = page.locator(f"tr[data-reviewer='{careless.username}']")
    row.locator("[data-testid=flagged]").wait_for()
    assert (
        page.locator(f"tr[data-reviewer='{careful.username}'] [data-testid=flagged]").count() == 0
    )
    row.locator("input[name=reason]").fill("3 of 4 gold items wrong")
    row.locator("button", has_text="Exclude from consensus").click()
    page.wait_for_selector("text=1 back to review")
    page.screenshot(path="/tmp/review-screenshots/consensus-excluded.png", full_page=True)
    assert ReviewerExclusion.objects.get().reason == "3 of 4 gold items wrong"
    assert Sample.objects.get(pk=sample.pk).status == SampleStatus.IN_REVIEW

    page.locator(f"tr[data-reviewer='{careless.username}'] button", has_text="Count again").click()
    page.wait_for_selector("text=counts in consensus again")
    assert not ReviewerExclusion.objects.exists()
    assert Sample.objects.get(pk=sample.pk).status == SampleStatus.VERIFIED
