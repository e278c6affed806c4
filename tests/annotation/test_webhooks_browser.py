"""The webhooks' pages in real headless Chromium with a real Celery worker: a lead adds an
endpoint for a dataset (a loopback receiver, allowed by the test's setting), copies the
secret shown once, sends a test event, and follows its delivery on the delivery log page:
the receiver's 500 first, the retry after the backoff, the 200; then Redeliver sends the
same message again and the log shows all three attempts. The page holds no inline script
(the Content-Security-Policy would refuse it): it follows the delivery by job-progress.js."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from annotation.models import WebhookDelivery, WebhookEndpoint
from core import roles
from tests.annotation.factories import UserFactory, mmooc_dataset
from tests.annotation.journey_steps import WAIT
from tests.conftest import worker_on
from tests.support.browser import chromium, log_in
from tests.support.webhook_receiver import webhook_receiver

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
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.console_errors = errors
        yield page
        context.close()


def test_a_lead_follows_a_delivery_in_its_log(live_server: Any, page: Any, settings: Any) -> None:
    lead = UserFactory.create(role=roles.LEAD)
    dataset = mmooc_dataset(name="hooked")
    base = live_server.url
    with webhook_receiver([], script={1: "500"}) as receiver:
        settings.WEBHOOK_ALLOWED_HOSTS = [receiver.host_port]
        env = {"WEBHOOK_ALLOWED_HOSTS": receiver.host_port, "WEBHOOK_BACKOFF_SECONDS": "1"}
        with worker_on(os.environ["REDIS_URL"], env):
            log_in(page, base, lead)
            page.goto(f"{base}/datasets/{dataset.pk}/")
            page.click("#link-webhooks")
            page.fill("#endpoint-form input[name=url]", "http://10.0.0.7/hook")
            page.check("#endpoint-form input[value='snapshot.built']")
            page.click("#endpoint-form [type=submit]")
            assert "a private address" in page.inner_text("#endpoint-form")
            page.fill("#endpoint-form input[name=url]", receiver.url)
            page.click("#endpoint-form [type=submit]")
            secret = page.inner_text("#webhook-secret code").strip()
            assert secret.startswith("whsec_")
            receiver.secrets.append(secret)
            endpoint = WebhookEndpoint.objects.get(dataset=dataset)
            assert endpoint.secret == secret

            page.click("#send-test")
            page.wait_for_url("**/webhooks/deliveries/*/")
            # The page follows the delivery and reloads itself once it has ended.
            page.wait_for_function(
                "() => document.getElementById('webhook-delivery').dataset.status === 'succeeded'"
                " && document.querySelectorAll('tr.attempt').length === 2",
                timeout=WAIT,
            )
            codes = page.locator("tr.attempt").evaluate_all(
                "rows => rows.map(r => r.dataset.statusCode)"
            )
            assert codes == ["500", "200"]
            assert "webhook-signature: v1," in page.inner_text("#webhook-attempts")
            delivery = WebhookDelivery.objects.get(endpoint=endpoint)
            assert delivery.message_id in page.inner_text("h1")

            page.click("#redeliver")
            page.wait_for_function(
                "() => document.querySelectorAll('tr.attempt').length === 3"
                " && document.getElementById('webhook-delivery').dataset.status === 'succeeded'",
                timeout=WAIT,
            )
            page.click("text=Back to the endpoint")
            log = page.inner_text("#webhook-deliveries")
            assert "webhook.test" in log and delivery.message_id in log
    assert receiver.bad_signatures == 0
    assert receiver.seen[delivery.message_id] == 3 and receiver.handled[delivery.message_id] == 1
    # The refused URL's 400 is the only error; nothing was refused by the policy.
    assert [e for e in page.console_errors if "400" not in e] == []
