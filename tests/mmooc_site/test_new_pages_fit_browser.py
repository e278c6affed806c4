"""The format reference, the Label Studio mapping, the lmms-eval confirmation and the webhook
pages fit a 1,440 px window in English and in Chinese: no page wider than the window (wide
tables scroll in their box), no header cell too narrow or too tall."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from annotation.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from annotation.webhooks import sending
from core import roles
from tests.annotation.factories import UserFactory, mmooc_dataset
from tests.annotation.test_labelstudio import EXPORT
from tests.judging.factories import bulk_samples
from tests.judging.test_harness_imports import MODEL_ARGS, mmooc_task, zip_folder
from tests.judging.test_pages_fit_browser import MEASURE, WIDTH
from tests.support.browser import chromium
from tests.support.harness_files import write_lmms_eval_log

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as browser:
        yield browser


def _fits(page: Any, name: str, language: str) -> None:
    measured = page.evaluate(MEASURE)
    assert measured["lang"] == language, name
    assert measured["width"] <= WIDTH, (name, language, measured["width"])
    assert measured["tooNarrow"] == [], (name, language, measured["tooNarrow"][:5])
    assert measured["tooTall"] == [], (name, language, measured["tooTall"][:5])


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_new_pages_fit_a_1440_px_window(
    live_server: Any, browser: Any, language: str, tmp_path: Path
) -> None:
    lead = UserFactory.create(role=roles.LEAD)
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 4)
    endpoint = WebhookEndpoint.objects.create(
        url="https://receiver.example.org/hooks/review-studio/" + "x" * 60,
        events=["import.finished", "snapshot.built", "samples.verified"],
        secret=sending.secret_new(),
        dataset=dataset,
    )
    body = sending.body_of({"type": "webhook.test", "data": {"message": "x" * 300}})
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint, event="webhook.test", message_id=sending.message_id_new(), payload={}
    )
    WebhookAttempt.objects.create(
        delivery=delivery,
        number=1,
        url=endpoint.url,
        request_headers=sending.signed_headers(
            message_id=delivery.message_id,
            body=body,
            secrets_in_use=[endpoint.secret, sending.secret_new()],
            at=delivery.created_at,
        ),
        request_body=body,
        status_code=500,
        response_body="try later " * 40,
        started_at=delivery.created_at,
    )
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
    page = context.new_page()
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", lead.username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("form [type=submit]")
    page.wait_for_load_state()
    for name, url in {
        "formats": reverse("formats"),
        "webhooks": reverse("annotation:dataset_webhooks", args=[dataset.pk]),
        "endpoint": reverse("annotation:webhook_detail", args=[endpoint.pk]),
        "delivery": reverse("annotation:webhook_delivery", args=[delivery.pk]),
    }.items():
        page.goto(f"{live_server.url}{url}")
        page.wait_for_load_state()
        _fits(page, name, language)
    page.goto(f"{live_server.url}{reverse('annotation:labelstudio_import', args=[dataset.pk])}")
    page.set_input_files("#labelstudio-upload input[name=file]", str(EXPORT))
    page.click("#labelstudio-upload [type=submit]")
    page.wait_for_selector("#labelstudio-mapping")
    _fits(page, "labelstudio mapping", language)
    write_lmms_eval_log(
        tmp_path, model="qwen2_5_vl", model_args=MODEL_ARGS, tasks=[mmooc_task(samples)]
    )
    archive = tmp_path / "log.zip"
    archive.write_bytes(zip_folder(tmp_path))
    page.goto(f"{live_server.url}{reverse('judging:dataset_judging', args=[dataset.pk])}")
    page.select_option("#upload-form select[name=kind]", "responses")
    page.set_input_files("#upload-form input[name=file]", str(archive))
    page.click("#upload-form [type=submit]")
    page.wait_for_selector("#confirm-form")
    _fits(page, "confirm", language)
    context.close()
