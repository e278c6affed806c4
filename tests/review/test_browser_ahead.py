"""The workbench's next sample, prefetched, in real headless Chromium: Ctrl+Enter swaps in a
sample already loaded and decoded without a page load, the reviews reach the database in the
background, a failed submit is shown and saved on "Try again", and a reservation left unused
goes back to the queue when the page is left."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.utils import timezone

from annotation.models import Sample
from review.models import Review, Slot
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset
from tests.support.browser import chromium_page, log_in
from tests.support.processes import wait_until

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

_READY = "() => document.documentElement.dataset.ahead === 'ready'"
_SAVED = "() => localStorage.getItem('review-outbox') === '[]'"
_CONFIG_SAMPLE = "() => JSON.parse(document.getElementById('review-config').textContent).sampleId"
_TAKEN = "() => document.getElementById('lease-note').textContent.trim() !== ''"


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def _start(page: Any, base: str, n: int) -> tuple[Any, Any]:
    reviewer = UserFactory.create(role="annotator")
    dataset = review_dataset(n, k=1, members=[reviewer])
    log_in(page, base, reviewer)
    page.goto(f"{base}/review/datasets/{dataset.pk}/")
    page.click("#start-review")
    page.wait_for_url("**/review/samples/*/")
    return dataset, reviewer


def _shown_sample(page: Any) -> int:
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def _reserved(dataset: Any) -> list[int]:
    return list(
        Slot.objects.filter(
            dataset=dataset, reviewer__isnull=True, lease_expires_at__gt=timezone.now()
        ).values_list("sample_id", flat=True)
    )


def test_ctrl_enter_swaps_in_the_next_sample_already_loaded(live_server: Any, page: Any) -> None:
    """Three reviews by keyboard: each Ctrl+Enter shows the next sample, its image already
    decoded, without loading a page (a value set on the window survives); each review is
    saved, and the sample shown becomes the reviewer's lease."""
    dataset, reviewer = _start(page, live_server.url, 4)
    page.evaluate("() => { window.sameDocument = true; }")
    seen = [_shown_sample(page)]
    for step in range(1, 4):
        page.wait_for_function(_READY)
        assert _reserved(dataset), "the next sample is reserved while the reviewer works"
        page.keyboard.press("a")
        page.keyboard.press("Control+Enter")
        page.wait_for_function(f"() => document.documentElement.dataset.shown === '{step}'")
        seen.append(page.evaluate(_CONFIG_SAMPLE))
        img = page.evaluate(
            "() => { const i = document.querySelector('main .zoom-image');"
            " return [i.complete, i.naturalWidth]; }"
        )
        assert img[0] and img[1] > 0
        assert float(page.evaluate("() => document.documentElement.dataset.nextMs")) >= 0
        page.wait_for_function(_SAVED)
        page.wait_for_function(_TAKEN)
        assert Review.objects.filter(reviewer=reviewer, sample_id=seen[-2]).exists()
        assert Slot.objects.get(sample_id=seen[-1]).reviewer_id == reviewer.pk
        assert _shown_sample(page) == seen[-1]  # the address follows once the review is in
        assert page.input_value("input[name=client_uuid]")
    assert page.evaluate("() => window.sameDocument === true")
    assert len(set(seen)) == 4
    assert page.evaluate("() => performance.getEntriesByName('review-next').length") == 3
    # Back reloads what the server knows: the previous sample's review is submitted.
    page.go_back()
    page.wait_for_url(f"**/review/samples/{seen[-2]}/")
    page.wait_for_selector("text=Review already submitted")


@pytest.mark.parametrize("failure", ["error", "network"])
def test_a_failed_background_submit_is_shown_and_not_lost(
    live_server: Any, page: Any, failure: str
) -> None:
    """When the server refuses the review (503) or cannot be reached, the next sample is on
    screen but the review is kept and shown with its reason; "Try again" saves it, and the
    next sample's submit waits for it."""
    _dataset, reviewer = _start(page, live_server.url, 3)
    first = _shown_sample(page)

    def refuse(route: Any) -> None:
        if failure == "network":
            route.abort("internetdisconnected")
        else:
            route.fulfill(status=503, content_type="application/json", body='{"detail": "Busy."}')

    page.route("**/api/reviews/", refuse)
    page.wait_for_function(_READY)
    page.keyboard.press("x")
    page.keyboard.press("i")
    page.keyboard.press("Control+Enter")
    row = page.locator("#pending-reviews [data-pending]")
    row.wait_for()
    reason = "Busy." if failure == "error" else "could not be reached"
    assert reason in row.inner_text()
    assert not Review.objects.filter(reviewer=reviewer).exists()
    page.keyboard.press("a")
    page.keyboard.press("Control+Enter")  # the next one waits for the earlier review
    assert "earlier review first" in page.inner_text("#form-error")

    page.unroute("**/api/reviews/")
    page.click("#pending-reviews [data-action=retry]")
    page.wait_for_function(_SAVED)
    page.wait_for_function(_TAKEN)
    review = Review.objects.get(reviewer=reviewer)
    assert (review.sample_id, review.decision, review.reject_reason) == (
        first,
        "reject",
        "invalid",
    )
    assert page.locator("#pending-reviews").is_hidden()


def test_an_unused_reservation_is_released_when_the_page_is_left(
    live_server: Any, page: Any
) -> None:
    """Leaving the workbench gives the reserved next sample back to the queue at once."""
    dataset, _reviewer = _start(page, live_server.url, 3)
    page.wait_for_function(_READY)
    assert len(_reserved(dataset)) == 1
    page.goto(f"{live_server.url}/review/mine/")
    wait_until(lambda: not _reserved(dataset), timeout=10, what="the reservation's release")
    assert Sample.objects.filter(dataset=dataset).count() == 3
