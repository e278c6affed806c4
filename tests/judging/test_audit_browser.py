"""The audit rating form in real headless Chromium: an auditor rates two items by keyboard."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from core import roles
from judging.models import AuditItem, AuditRating, AuditSet
from tests.annotation.factories import UserFactory
from tests.judging import audit_factories as af
from tests.support.browser import chromium_page, log_in

# Playwright's sync API runs an event loop in this thread; the ORM calls below are plain
# synchronous calls between browser steps.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def test_an_auditor_rates_two_items_by_keyboard(live_server: Any, page: Any) -> None:
    """Keys pick the answer and reasoning scores, Enter saves and opens the next item; an
    incomplete rating is refused on the page; after the last item the audit set reappears."""
    dataset, _ = af.scoring_dataset(n_samples=3, models=("gpt-4o",))
    auditor = UserFactory.create(role=roles.AUDITOR)
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=2, double_rating_fraction=0)
    first, second = AuditItem.objects.filter(audit_set=audit_set).order_by("position")

    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", auditor.username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("form [type=submit]")
    page.goto(f"{live_server.url}/audits/{audit_set.pk}/")
    page.click("#start-rating")
    page.wait_for_url(f"**/audit-items/{first.pk}/rate/")

    page.keyboard.press("1")
    page.keyboard.press("Enter")  # no reasoning score yet: refused on the page
    page.wait_for_function("() => document.getElementById('form-error').textContent.length > 0")
    assert AuditRating.objects.count() == 0
    page.keyboard.press("r")  # 0.75
    assert page.is_checked("input[name=answer_score][value='1']")
    assert page.is_checked("input[name=reasoning_score][value='0.75']")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/audit-items/{second.pk}/rate/")

    page.keyboard.press("0")
    page.keyboard.press("q")  # 0
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/audits/{audit_set.pk}/")

    ratings = {r.item_id: (r.answer_score, r.reasoning_score) for r in AuditRating.objects.all()}
    assert ratings == {first.pk: (1, 0.75), second.pk: (0, 0.0)}
    assert all(r.seconds_spent > 0 for r in AuditRating.objects.all())


def test_a_lead_plans_from_the_dataset_page_and_an_auditor_finds_it_at_home(
    live_server: Any, page: Any
) -> None:
    """The lead reaches the planner from the dataset page, previews (a GET with no CSRF token
    in the URL) and draws; the auditor's home lists the items waiting for them, rating them
    leads to statistics computed off the request, shown with their time."""
    dataset, _ = af.scoring_dataset(n_samples=3, models=("gpt-4o",))
    lead = UserFactory.create(role=roles.LEAD)
    auditor = UserFactory.create(role=roles.AUDITOR)
    af.add_member(dataset, auditor)

    log_in(page, live_server.url, lead)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/")
    page.click("nav.journey >> text=Audits")
    page.click("text=New audit set")
    page.fill("input[name=size]", "3")
    page.fill("input[name=floor]", "1")
    page.fill("input[name=name]", "journey")
    page.click("#preview")
    page.wait_for_selector("#allocation-table")
    assert "csrfmiddlewaretoken" not in page.url and "size=3" in page.url
    page.click("#draw")
    page.wait_for_url("**/audits/*/")
    audit_set = AuditSet.objects.get(dataset=dataset, name="journey")
    assert audit_set.status == "succeeded" and audit_set.items.count() == 3

    page.context.clear_cookies()
    log_in(page, live_server.url, auditor)
    page.goto(f"{live_server.url}/")
    waiting = page.locator("[data-audit-waiting]")
    assert waiting.get_attribute("data-audit-waiting") == "3"
    page.click("text=journey")
    page.click("#start-rating")
    for item in AuditItem.objects.filter(audit_set=audit_set).order_by("position"):
        page.wait_for_url(f"**/audit-items/{item.pk}/rate/")
        page.keyboard.press("1")
        page.keyboard.press("w")
        page.keyboard.press("Enter")
    page.wait_for_url(f"**/audits/{audit_set.pk}/")
    page.click("form >> text=Statistics")
    page.wait_for_selector("#computed-state")
    assert "Computed by a worker at" in page.inner_text("#computed-state")
    assert "3 rated" in page.inner_text("main")
