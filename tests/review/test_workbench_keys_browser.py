"""The workbench by keys alone, in real headless Chromium: skip with a reason, the "?" list of
every key, and undo of the last submission (reopened, amended, back to the next sample)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from review.models import Review, Skip, Slot
from tests.annotation.factories import UserFactory
from tests.review.factories import logicvista_dataset
from tests.support.browser import chromium_page, log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The sample whose form is on screen (null while a page loads).
_SAMPLE_ON_SCREEN = (
    "() => { const c = document.getElementById('review-config');"
    " return c ? JSON.parse(c.textContent).sampleId : null; }"
)


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def _start(page: Any, base: str, n: int = 3, k: int = 2) -> tuple[Any, Any]:
    reviewer = UserFactory.create(role="annotator")
    dataset = logicvista_dataset(n, k=k, members=[reviewer])
    log_in(page, base, reviewer)
    page.goto(f"{base}/review/datasets/{dataset.pk}/")
    page.click("#start-review")
    page.wait_for_url("**/review/samples/*/")
    return reviewer, dataset


def test_k_then_a_reason_then_enter_skips_to_the_next_sample(live_server: Any, page: Any) -> None:
    """`k` puts the caret in the skip reason; Enter there sets the sample aside with that
    reason and opens the next one (it used to ask for a decision instead)."""
    reviewer, _dataset = _start(page, live_server.url)
    first = page.evaluate(_SAMPLE_ON_SCREEN)
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.id") == "f-skip"
    page.keyboard.type("image too blurry to judge")
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => !location.pathname.endsWith('/samples/{first}/')")
    assert page.inner_text("#form-error") == ""
    skip = Skip.objects.get(reviewer=reviewer)
    assert (skip.sample_id, skip.reason) == (first, "image too blurry to judge")
    assert not Review.objects.filter(reviewer=reviewer).exists()
    assert page.evaluate(_SAMPLE_ON_SCREEN) != first


def test_enter_in_an_empty_skip_reason_asks_for_one(live_server: Any, page: Any) -> None:
    """Enter with no reason typed skips nothing and says why, not "accept or reject first"."""
    reviewer, _dataset = _start(page, live_server.url, n=1)
    page.keyboard.press("k")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('form-error').textContent !== ''")
    assert "skip" in page.inner_text("#form-error").lower()
    assert not Skip.objects.filter(reviewer=reviewer).exists()


def test_question_mark_opens_the_list_of_every_key_and_escape_closes_it(
    live_server: Any, page: Any
) -> None:
    """`?` opens a dialog listing every key (skip and undo among them); keys do nothing to
    the form while it is open; Escape closes it and the keys act again."""
    _start(page, live_server.url, n=1)
    dialog = page.locator("#keys-help")
    assert not dialog.is_visible()
    page.keyboard.press("?")
    dialog.wait_for(state="visible")
    listed = dialog.inner_text()
    for key in ("Ctrl+Enter", "Shift+1", "Esc", "?"):
        assert key in listed
    assert "Skip" in listed and "Undo" in listed and "Clarity" in listed
    page.keyboard.press("a")
    assert not page.is_checked("input[name=decision][value=accept]")
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    page.keyboard.press("a")
    assert page.is_checked("input[name=decision][value=accept]")


def test_the_list_of_keys_is_translated(live_server: Any) -> None:
    """In Chinese the dialog's title and its rows are Chinese."""
    with chromium_page(locale="zh-CN", extra_http_headers={"Accept-Language": "zh-CN"}) as page:
        _start(page, live_server.url, n=1)
        page.keyboard.press("?")
        page.locator("#keys-help").wait_for(state="visible")
        text = page.locator("#keys-help").inner_text()
        assert "键盘快捷键" in text and "撤销上一次提交" in text


def test_z_reopens_the_last_submission_and_saving_it_returns_to_the_next_sample(
    live_server: Any, page: Any
) -> None:
    """With two reviews per sample, accept, Ctrl+Enter (the next sample is swapped in), then
    `z`: the submitted sample, still waiting for its second review, opens to amend; reject it
    with `i` and Ctrl+Enter, and the reviewer is back on the sample they had moved on to. One
    review, now a rejection."""
    reviewer, _dataset = _start(page, live_server.url)
    first = page.evaluate(_SAMPLE_ON_SCREEN)
    page.wait_for_function("() => document.documentElement.dataset.ahead === 'ready'")
    assert page.locator("#undo").is_hidden()
    page.keyboard.press("a")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(f"() => ![null, {first}].includes(({_SAMPLE_ON_SCREEN})())")
    second = page.evaluate(_SAMPLE_ON_SCREEN)
    page.locator("#undo").wait_for(state="visible")
    page.keyboard.press("z")
    page.wait_for_url(f"**/review/samples/{first}/?amend=1&undo=1")
    page.locator("[data-testid=amending]").wait_for()
    assert page.is_checked("input[name=decision][value=accept]")
    page.keyboard.press("i")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"**/review/samples/{second}/")
    review = Review.objects.get(reviewer=reviewer)
    assert (review.sample_id, review.decision, review.reject_reason) == (
        first,
        "reject",
        "invalid",
    )
    assert Slot.objects.get(reviewer=reviewer, sample_id=second, done=False)
    # Back on the second sample, undo points at the amended first one again.
    page.locator("#undo").wait_for(state="visible")
    assert f"/samples/{first}/" in (page.get_attribute("#undo", "href") or "")


def test_undo_is_offered_only_while_the_review_can_be_amended(live_server: Any, page: Any) -> None:
    """Once the sample of the last review is settled (k = 1: at once), there is nothing to
    undo: no link on the next sample, and `z` says so."""
    reviewer = UserFactory.create(role="annotator")
    dataset = logicvista_dataset(2, k=1, members=[reviewer])
    log_in(page, live_server.url, reviewer)
    page.goto(f"{live_server.url}/review/datasets/{dataset.pk}/")
    page.click("#start-review")
    page.wait_for_url("**/review/samples/*/")
    first = page.evaluate(_SAMPLE_ON_SCREEN)
    # k = 1 settles the sample with this review; reload the next page from the server.
    page.keyboard.press("a")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(f"() => ![null, {first}].includes(({_SAMPLE_ON_SCREEN})())")
    # The review goes in the background; once the outbox is empty the server has it.
    page.wait_for_function("() => (localStorage.getItem('review-outbox') || '[]') === '[]'")
    assert Review.objects.filter(reviewer=reviewer, sample_id=first).exists()
    page.reload()
    assert page.locator("#undo").is_hidden()
    page.keyboard.press("z")
    page.wait_for_function("() => document.getElementById('form-error').textContent !== ''")
    assert f"/samples/{first}/" not in page.url
