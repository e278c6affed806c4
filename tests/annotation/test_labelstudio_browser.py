"""Label Studio's journey in real headless Chromium with a real Celery worker: from a site with
one lead, a new MMOOC dataset, the import page's link to the Label Studio page, the real
export of two annotators' work uploaded, the guessed mapping confirmed, the job followed to
its end, and the samples the two agreed on verified; then a labelstudio release built from
the snapshots page."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from annotation.models import Dataset, SampleStatus, Snapshot
from core import roles
from review.models import Review
from tests.annotation.factories import UserFactory
from tests.annotation.journey_steps import WAIT
from tests.annotation.test_labelstudio import EXPORT
from tests.conftest import worker_on
from tests.support.browser import chromium, log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.redis,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        yield context.new_page()
        context.close()


def test_a_lead_brings_a_label_studio_project_over(live_server: Any, page: Any) -> None:
    lead = UserFactory.create(role=roles.LEAD)
    base = live_server.url
    with worker_on(os.environ["REDIS_URL"]):
        log_in(page, base, lead)
        page.goto(f"{base}/datasets/new/")
        page.fill("#id_name", "From Label Studio")
        page.select_option("#id_kind", "image_question")
        page.select_option("#id_preset", "mmooc")
        page.click("main form [type=submit]")
        page.wait_for_url("**/datasets/*/")
        dataset = Dataset.objects.get(name="From Label Studio")
        page.click("nav.journey a.button")  # Import samples
        page.click("text=Import a Label Studio project")
        page.set_input_files("#labelstudio-upload input[name=file]", str(EXPORT))
        page.click("#labelstudio-upload [type=submit]")
        summary = page.inner_text("#labelstudio-summary")
        assert "8 completed annotations (0 skipped) become reviews" in summary
        assert "ann1@example.org" in summary and "gpt-4o-prelabel" in summary
        assert page.input_value("#id_data_question") == "question"
        assert page.input_value("#id_control_answerability_group") == "answerability_group"
        page.click("#labelstudio-mapping [type=submit]")
        page.wait_for_url("**/imports/*/")
        page.wait_for_function(
            "() => document.querySelector('#import-job').dataset.status === 'succeeded'",
            timeout=WAIT,
        )
        assert "8 reviews made from Label Studio annotations" in page.inner_text("#import-job")
        assert Review.objects.filter(dataset_id=dataset.pk).count() == 8
        assert dataset.samples.filter(status=SampleStatus.VERIFIED).count() == 3

        page.goto(f"{base}/datasets/{dataset.pk}/snapshots/")
        page.fill("input[name=name]", "v1")
        page.select_option("select[name=format]", "labelstudio")
        page.click("main form [type=submit]")
        page.wait_for_url("**/snapshots/*/")
        page.wait_for_function(
            "() => document.querySelector('[data-job-progress-url]').dataset.status"
            " === 'succeeded'",
            timeout=WAIT,
        )
    snapshot = Snapshot.objects.get(dataset=dataset, name="v1")
    assert snapshot.status == "succeeded" and snapshot.done == 3
