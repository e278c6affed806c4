"""Samples assigned in the browser: a lead ticks a sample in the sample list and assigns it to
an annotator, who is then served it before the samples ahead of it in the queue, and another
annotator is not served it at all."""

from __future__ import annotations

import os
from typing import Any

import pytest

from annotation.models import Sample
from review.models import Assignment
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset
from tests.support.browser import chromium_page, log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_lead_assigns_a_sample_and_its_annotator_gets_it_first(live_server: Any) -> None:
    """The third sample of three, assigned to one annotator from the sample list, is the one
    "Start reviewing" opens for them; for a second annotator it opens another one."""
    alice, bob = (UserFactory.create(role="annotator") for _ in range(2))
    lead = UserFactory.create(role="lead")
    dataset = review_dataset(3, k=1, members=[alice, bob])
    first, second, third = Sample.objects.filter(dataset=dataset).order_by("pk")
    base = live_server.url

    with chromium_page() as page:
        log_in(page, base, lead)
        page.goto(f"{base}/datasets/{dataset.pk}/samples/")
        page.check(f"input[name=ids][value='{third.pk}']")
        page.select_option("#bulk-action", "assign")
        page.click("#bulk-submit")
        page.wait_for_selector("#bulk-assignees")
        assert "Assign 1 sample to the annotators ticked below?" in page.inner_text(
            "#bulk-question"
        )
        page.check(f"#bulk-assignees input[value='{alice.username}']")
        page.click("#bulk-confirm")
        page.wait_for_selector("text=1 assignment made")
    assert list(Assignment.objects.values_list("sample_id", "reviewer_id")) == [
        (third.pk, alice.pk)
    ]

    with chromium_page() as page:
        log_in(page, base, alice)
        page.goto(f"{base}/review/datasets/{dataset.pk}/")
        page.click("#start-review")
        page.wait_for_url(f"**/review/samples/{third.pk}/")
    with chromium_page() as page:  # alice's workbench may hold the first one ahead for her
        log_in(page, base, bob)
        page.goto(f"{base}/review/datasets/{dataset.pk}/")
        page.click("#start-review")
        page.wait_for_url("**/review/samples/*/")
        assert not page.url.endswith(f"/review/samples/{third.pk}/"), page.url
        assert page.url.endswith((f"/{first.pk}/", f"/{second.pk}/")), page.url
