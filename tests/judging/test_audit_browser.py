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
from tests.support.browser import chromium_page, log_in, sign_in

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


# Set once after the first page load: a full page load between items would clear it.
_MARK = "() => { window.auditMarker = 'kept'; }"
_MARKED = "() => window.auditMarker === 'kept'"
_READY = "() => document.documentElement.dataset.ahead === 'ready'"


def test_an_auditor_rates_ten_real_items_with_the_next_one_preloaded(
    live_server: Any, page: Any
) -> None:
    """From an empty site: LogicVista items with their real images, one model's responses
    scored by three judges, an audit set of ten items. The auditor opens the first by a page
    load, then per item the next one is reserved and loaded before Enter, and Enter shows it
    without a page load (a window marker survives), zoomable; every rating is stored with
    the values keyed, and after the last one the audit set's page opens."""
    from annotation.models import Sample
    from tests.judging.factories import logicvista_dataset

    dataset = logicvista_dataset(limit=11)
    samples = list(Sample.objects.filter(dataset=dataset).order_by("id"))
    af.scoring_dataset(dataset=dataset, samples=samples, models=("gpt-4o",))
    auditor = UserFactory.create(role=roles.AUDITOR)
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=10, floor=0, double_rating_fraction=0)
    items = list(AuditItem.objects.filter(audit_set=audit_set).order_by("position"))
    assert len(items) == 10

    log_in(page, live_server.url, auditor)
    page.goto(f"{live_server.url}/audits/{audit_set.pk}/")
    page.click("#start-rating")
    page.wait_for_url(f"**/audit-items/{items[0].pk}/rate/")
    page.evaluate(_MARK)
    keyed: dict[int, tuple[int, float]] = {}
    for step, item in enumerate(items):
        assert page.get_attribute("#audit-item", "data-item") == str(item.pk)
        assert page.evaluate("() => document.querySelector('main .zoom-image').naturalWidth") > 0
        if step == 0:  # the viewer zooms by key (media.js, as in the workbench)
            page.keyboard.press("+")
            assert float(page.get_attribute("main .zoom-image", "data-scale") or 0) > 1
        answer, reasoning = step % 2, ("q", "w", "e", "r", "t")[step % 5]
        keyed[item.pk] = (answer, (0.0, 0.25, 0.5, 0.75, 1.0)[step % 5])
        last = step == len(items) - 1
        if not last:
            page.wait_for_function(_READY)  # the next item reserved and decoded off screen
        page.keyboard.press(str(answer))
        page.keyboard.press(reasoning)
        page.keyboard.press("Enter")
        if last:
            page.wait_for_url(f"**/audits/{audit_set.pk}/")
            break
        following = items[step + 1]
        page.wait_for_function(
            f"() => document.querySelector('#audit-item').dataset.item === '{following.pk}'"
        )
        assert page.evaluate(_MARKED), f"a page load happened after item {step + 1}"
        # The address follows once the rating is saved and the reservation is the lease.
        page.wait_for_url(f"**/audit-items/{following.pk}/rate/")
        page.wait_for_function("() => document.getElementById('lease-note').textContent !== ''")
        assert AuditRating.objects.filter(item=item, auditor=auditor).exists()
        assert float(page.evaluate("() => document.documentElement.dataset.nextMs")) > 0
    ratings = {
        r.item_id: (r.answer_score, r.reasoning_score)
        for r in AuditRating.objects.filter(audit_set=audit_set)
    }
    assert ratings == keyed


def test_the_rating_page_fits_a_phone_and_works_without_script(live_server: Any, page: Any) -> None:
    """At 390 px the rating page of a real LogicVista item (a wide image) has no horizontal
    scroll; with script off the form posts and the next item opens, in Chinese too."""
    from annotation.models import Sample
    from tests.judging.factories import logicvista_dataset

    dataset = logicvista_dataset(limit=3)
    samples = list(Sample.objects.filter(dataset=dataset).order_by("id"))
    af.scoring_dataset(dataset=dataset, samples=samples, models=("gpt-4o",))
    auditor = UserFactory.create(role=roles.AUDITOR)
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=2, double_rating_fraction=0)
    first, second = AuditItem.objects.filter(audit_set=audit_set).order_by("position")
    context = page.context.browser.new_context(
        viewport={"width": 390, "height": 844}, java_script_enabled=False
    )
    # Without script the header's language form shows its own submit button: the session is
    # given to the context instead of going through the login form.
    sign_in(context, live_server.url, auditor)
    context.add_cookies([{"name": "django_language", "value": "zh-hans", "url": live_server.url}])
    phone = context.new_page()
    phone.goto(f"{live_server.url}/audits/{audit_set.pk}/")
    phone.click("#start-rating")
    phone.wait_for_url(f"**/audit-items/{first.pk}/rate/")
    assert phone.locator("main .zoom-image").count() == 1
    width = phone.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide"
    phone.check("input[name=answer_score][value='1']")
    phone.check("input[name=reasoning_score][value='0.5']")
    phone.click("#submit-next")
    phone.wait_for_url(f"**/audit-items/{second.pk}/rate/")
    assert "评分已保存" in phone.inner_text("main")
    context.close()
    rating = AuditRating.objects.get()
    assert (rating.item_id, rating.answer_score, rating.reasoning_score) == (first.pk, 1, 0.5)


def test_a_safety_items_audio_plays_by_key_after_the_swap(live_server: Any, page: Any) -> None:
    """Tri-modal items with a real audio clip: `p` plays it (its time advances), `s` and Enter
    save and swap in the next item, whose clip `p` plays too, still without a page load."""
    from annotation import services as annotation_services
    from annotation.models import SampleMedia
    from tests.conftest import SHARED_DATA

    dataset, _ = af.safety_dataset(n_samples=4)
    clip = (SHARED_DATA / "audio" / "198-209-0000.ogg").read_bytes()
    asset = annotation_services.media_asset_store(data=clip, kind="audio")
    for sample in dataset.samples.all():
        SampleMedia.objects.create(sample=sample, asset=asset, role="audio")
    auditor = UserFactory.create(role=roles.AUDITOR)
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, task="safety", size=2, floor=0, double_rating_fraction=0)
    first, second = AuditItem.objects.filter(audit_set=audit_set).order_by("position")

    log_in(page, live_server.url, auditor)
    page.goto(f"{live_server.url}/audits/{audit_set.pk}/")
    page.click("#start-rating")
    page.wait_for_url(f"**/audit-items/{first.pk}/rate/")
    page.evaluate(_MARK)
    for item in (first, second):
        assert page.get_attribute("#audit-item", "data-item") == str(item.pk)
        page.keyboard.press("p")
        page.wait_for_function("() => document.getElementById('audio').currentTime > 0.2")
        page.keyboard.press("p")  # paused again
        assert page.evaluate("() => document.getElementById('audio').paused")
        if item == first:
            page.wait_for_function(_READY)
        page.keyboard.press("s")
        page.keyboard.press("Enter")
        if item == first:
            page.wait_for_function(
                f"() => document.querySelector('#audit-item').dataset.item === '{second.pk}'"
            )
            assert page.evaluate(_MARKED)
    page.wait_for_url(f"**/audits/{audit_set.pk}/")
    labels = dict(AuditRating.objects.values_list("item_id", "safety_label"))
    assert labels == {first.pk: "safe", second.pk: "safe"}


_OUTBOX = "() => JSON.parse(localStorage.getItem('audit-outbox') || '[]')"


def test_a_rating_refused_in_the_background_is_offered_again_after_a_reload(
    live_server: Any, page: Any
) -> None:
    """The next item is on screen but the server refused the rating (503): it is shown with
    its reason and kept in this browser; after a reload it is shown again, the next rating
    waits for it, and "Try again" saves it with the values keyed."""
    dataset, _ = af.scoring_dataset(n_samples=4, models=("gpt-4o",))
    auditor = UserFactory.create(role=roles.AUDITOR)
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=3, double_rating_fraction=0)
    first, second, _third = AuditItem.objects.filter(audit_set=audit_set).order_by("position")
    log_in(page, live_server.url, auditor)
    page.goto(f"{live_server.url}/audits/{audit_set.pk}/")
    page.click("#start-rating")
    page.wait_for_url(f"**/audit-items/{first.pk}/rate/")

    def refuse(route: Any) -> None:
        route.fulfill(status=503, content_type="application/json", body='{"detail": "Busy."}')

    page.route("**/api/audit-ratings/", refuse)
    page.wait_for_function(_READY)
    page.keyboard.press("1")
    page.keyboard.press("r")  # 0.75
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => document.querySelector('#audit-item').dataset.item === '{second.pk}'"
    )
    row = page.locator("#pending-rating [data-pending]")
    row.wait_for()
    assert "Busy." in row.inner_text()
    [kept] = page.evaluate(_OUTBOX)
    assert (kept["body"]["item"], kept["failed"]) == (first.pk, "Busy.")

    page.reload()  # the page left: the refused rating is still offered
    row.wait_for()
    assert "Busy." in row.inner_text() and row.locator("[data-action=retry]").is_visible()
    assert AuditRating.objects.count() == 0
    page.keyboard.press("0")
    page.keyboard.press("q")
    page.keyboard.press("Enter")  # the next rating waits for the earlier one
    page.wait_for_function("() => document.getElementById('form-error').textContent !== ''")
    assert "earlier rating first" in page.inner_text("#form-error")

    page.unroute("**/api/audit-ratings/")
    page.click("#pending-rating [data-action=retry]")
    page.wait_for_function("() => localStorage.getItem('audit-outbox') === '[]'")
    assert page.locator("#pending-rating").is_hidden()
    rating = AuditRating.objects.get(auditor=auditor)
    assert (rating.item_id, rating.answer_score, rating.reasoning_score) == (first.pk, 1, 0.75)
