"""The workbench in real headless Chromium: log in, claim, zoom, play audio, decide by
keyboard, keep a draft across a reload, submit and move on to the next sample."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from review.models import Draft, Review
from tests.annotation.factories import UserFactory
from tests.review.factories import open_queue, trimodal_pair

# Playwright's sync API runs an event loop in this thread; the ORM calls below are plain
# synchronous calls between browser steps.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
]


@pytest.fixture
def page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        yield context.new_page()
        context.close()
        browser.close()


def test_review_a_trimodal_sample_by_keyboard(live_server: Any, page: Any) -> None:
    """A reviewer claims, zooms, plays the audio, decides by keys, reloads without losing
    the draft, submits with Ctrl+Enter and lands on the next sample."""
    unsafe, safe = trimodal_pair()
    reviewer = UserFactory(role="annotator")
    open_queue(unsafe.dataset, k=2, members=[reviewer])

    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", reviewer.username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("form [type=submit]")
    page.goto(f"{live_server.url}/review/datasets/{unsafe.dataset_id}/")
    page.click("#start-review")
    page.wait_for_url(f"**/review/samples/{unsafe.pk}/")
    assert page.locator("text=differ minimally").count() == 1

    page.keyboard.press("+")
    page.keyboard.press("+")
    assert float(page.get_attribute(".zoom-image", "data-scale") or 0) > 2
    page.keyboard.press("f")
    page.wait_for_function(
        "document.querySelector('.zoom-image').src.endsWith(document.querySelector('.zoom-image').dataset.full)"
    )

    page.keyboard.press("p")
    page.wait_for_function("document.getElementById('audio').currentTime > 0.3", timeout=10000)
    page.keyboard.press("p")

    for key in ("a", "3", "Shift+Digit4", "m", "Shift+N", "u"):
        page.keyboard.press(key)
    assert page.is_checked("input[name=decision][value=accept]")
    assert page.is_checked("input[name=clarity][value='3']")
    assert page.is_checked("input[name=naturalness][value='4']")
    assert page.is_checked("input[name=image_aligned][value=true]")
    assert page.is_checked("input[name=audio_aligned][value=false]")

    page.fill("#f-note", "the alarm is hard to hear")
    page.wait_for_function("document.getElementById('save-state').dataset.state === 'server'")
    assert Draft.objects.filter(sample=unsafe, reviewer=reviewer).exists()
    page.evaluate("localStorage.clear()")  # the server draft alone must bring it back
    page.reload()
    assert page.input_value("#f-note") == "the alarm is hard to hear"
    assert page.is_checked("input[name=audio_aligned][value=false]")

    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"**/review/samples/{safe.pk}/")
    review = Review.objects.get(sample=unsafe, reviewer=reviewer)
    assert (review.decision, review.clarity, review.naturalness) == ("accept", 3, 4)
    assert (review.image_aligned, review.audio_aligned) == (True, False)
    assert review.note == "the alarm is hard to hear"
    assert review.seconds_spent >= 1
    assert not Draft.objects.filter(sample=unsafe, reviewer=reviewer).exists()
