"""Gold items in real headless Chromium: a lead marks one on the sample page, an annotator is
served it among their claims, answers it like any sample and sees the feedback."""

from __future__ import annotations

import os
from typing import Any

import pytest

from annotation.models import Sample, SampleStatus
from review.gold import services as gold
from review.models import GoldAnswer, GoldItem, Review
from tests.annotation.factories import UserFactory
from tests.annotation.test_journey_browser import page
from tests.review.factories import gold_ready_dataset
from tests.review.gold.test_services import AlwaysGold
from tests.support.browser import log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

__all__ = ["page"]


def test_a_lead_marks_a_gold_item_and_a_reviewer_answers_it(
    live_server: Any, page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    lead = UserFactory.create(role="lead")
    annotator = UserFactory.create(role="annotator")
    dataset, verified = gold_ready_dataset(annotator, feedback=True)
    base = live_server.url

    log_in(page, base, lead)
    page.goto(f"{base}/samples/{verified.pk}/")
    page.fill("#gold-panel textarea[name=explanation]", "There is no car in the image.")
    page.click("#gold-mark")
    page.wait_for_selector("[data-testid=gold-marked]")
    page.screenshot(path="/tmp/review-screenshots/gold-marked.png", full_page=True)
    assert GoldItem.objects.get(sample=verified).explanation == "There is no car in the image."
    page.context.clear_cookies()

    monkeypatch.setattr(gold, "_rng", AlwaysGold())  # the next claim serves the gold item
    log_in(page, base, annotator)
    page.goto(f"{base}/review/datasets/{dataset.pk}/")
    page.click("#start-review")
    page.wait_for_url(f"**/review/samples/{verified.pk}/")
    assert page.locator("text=Verified").count() == 0  # shown as any sample in review
    page.keyboard.press("a")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("[data-testid=gold-feedback]")
    page.screenshot(path="/tmp/review-screenshots/gold-feedback.png", full_page=True)
    assert "your answer matched the expected one" in page.content()
    assert "There is no car in the image." in page.content()
    assert GoldAnswer.objects.get(reviewer=annotator).matched
    assert not Review.objects.filter(sample=verified).exists()
    assert Sample.objects.get(pk=verified.pk).status == SampleStatus.VERIFIED
    monkeypatch.setattr(gold, "_rng", AlwaysGold())
    page.click("#next-sample")  # no gold item is left for them: the normal claim
    normal = Sample.objects.get(dataset=dataset, status=SampleStatus.PENDING_REVIEW)
    page.wait_for_url(f"**/review/samples/{normal.pk}/")
