"""The workbench in real headless Chromium: log in, claim, zoom, play audio, decide by
keyboard, keep a draft across a reload, submit and move on to the next sample; Back to a
submitted review or adjudication shows that it was submitted."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from review.models import Draft, Review
from tests.annotation.factories import UserFactory
from tests.review.factories import open_queue, trimodal_pair
from tests.support.browser import chromium_page, log_in

# Playwright's sync API runs an event loop in this thread; the ORM calls below are plain
# synchronous calls between browser steps.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Screenshots for a person to look at; outside the repository.
_SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR", "/tmp/review-screenshots"))
_SCREENSHOTS.mkdir(parents=True, exist_ok=True)


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def test_review_a_trimodal_sample_by_keyboard(live_server: Any, page: Any) -> None:
    """A reviewer claims, zooms, plays the audio, decides by keys, reloads without losing
    the draft, submits with Ctrl+Enter and lands on the next sample."""
    unsafe, safe = trimodal_pair()
    reviewer = UserFactory.create(role="annotator")
    open_queue(unsafe.dataset, k=2, members=[reviewer])

    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", reviewer.username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("form [type=submit]")
    page.goto(f"{live_server.url}/review/datasets/{unsafe.dataset_id}/")
    page.click("#start-review")
    page.wait_for_url(f"**/review/samples/{unsafe.pk}/")
    assert page.locator("text=differ minimally").count() == 1
    page.screenshot(path=str(_SCREENSHOTS / "workbench-trimodal.png"), full_page=True)

    page.keyboard.press("+")
    page.keyboard.press("+")
    assert float(page.get_attribute(".zoom-image", "data-scale") or 0) > 2
    page.keyboard.press("f")
    page.wait_for_function(
        "() => { const img = document.querySelector('.zoom-image');"
        " return img.src.endsWith(img.dataset.full); }"
    )

    page.keyboard.press("p")
    page.wait_for_function(
        "() => document.getElementById('audio').currentTime > 0.3", timeout=10000
    )
    page.keyboard.press("p")

    for key in ("a", "3", "Shift+Digit4", "m", "Shift+N", "u"):
        page.keyboard.press(key)
    assert page.is_checked("input[name=decision][value=accept]")
    assert page.is_checked("input[name=clarity][value='3']")
    assert page.is_checked("input[name=naturalness][value='4']")
    assert page.is_checked("input[name=image_aligned][value=true]")
    assert page.is_checked("input[name=audio_aligned][value=false]")

    page.fill("#f-note", "the alarm is hard to hear")
    page.wait_for_function("() => document.getElementById('save-state').dataset.state === 'server'")
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


def test_accepting_untouched_on_a_dataset_without_terms_changes_only_the_status(
    live_server: Any, page: Any
) -> None:
    """On a LogicVista-like dataset (no taxonomy terms), `a` then Ctrl+Enter verifies the
    sample and changes nothing else, in the database and in its history; a category typed
    into the free-text field is kept. The item's text image is shown at full size in a
    viewer of its aspect ratio."""
    from annotation.models import Sample, SampleRevision
    from annotation.services import LABEL_FIELDS
    from tests.conftest import SHARED_DATA
    from tests.review.factories import logicvista_dataset

    reviewer = UserFactory.create(role="annotator")
    image = (SHARED_DATA / "logicvista" / "images" / "v1_287.png").read_bytes()
    dataset = logicvista_dataset(2, k=1, members=[reviewer], image=image)
    first, second = Sample.objects.filter(dataset=dataset).order_by("external_id")
    labels = {name: getattr(first, name) for name in LABEL_FIELDS}

    log_in(page, live_server.url, reviewer)
    page.goto(f"{live_server.url}/review/datasets/{dataset.pk}/")
    page.click("#start-review")
    page.wait_for_url(f"**/review/samples/{first.pk}/")
    assert page.locator("select#f-category").count() == 0
    assert page.input_value("#f-category") == "deductive"
    assert "1 of 2" in page.inner_text("[data-testid=position]")
    page.wait_for_function("() => document.querySelector('.zoom-image').complete")
    shown = page.evaluate(
        "(() => { const img = document.querySelector('.zoom-image');"
        " const box = img.parentElement.getBoundingClientRect();"
        " return [img.naturalWidth, box.width / box.height]; })()"
    )
    assert shown[0] == 874  # the original, not the 320-pixel thumbnail
    assert abs(shown[1] - 874 / 238) < 0.05
    # Wide enough that the text reads at (about) its own size in a 1400-pixel window.
    assert (
        page.evaluate("document.querySelector('.zoom-image').getBoundingClientRect().width") > 800
    )
    page.screenshot(path=str(_SCREENSHOTS / "workbench-logicvista.png"), full_page=True)

    page.keyboard.press("a")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"**/review/samples/{second.pk}/")
    first.refresh_from_db()
    assert first.status == "verified"
    assert {name: getattr(first, name) for name in LABEL_FIELDS} == labels
    later = SampleRevision.objects.filter(sample=first, number__gt=1)
    assert later.exists() and all(set(r.after) == {"status"} for r in later)

    page.keyboard.press("c")
    page.fill("#f-category", "spatial")
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"**/review/datasets/{dataset.pk}/")
    second.refresh_from_db()
    assert (second.status, second.category_code, second.scenario) == ("verified", "spatial", "")

    page.goto(f"{live_server.url}/samples/{first.pk}/")
    history = page.inner_text("#sample-history")
    assert "Verified" in history and "category" not in history.lower()
    page.goto(f"{live_server.url}/samples/{second.pk}/")
    assert "inductive → spatial" in page.inner_text("#sample-history")


def test_a_reviewer_reopens_and_amends_their_review(live_server: Any, page: Any) -> None:
    """Back to a submitted review shows that it was submitted, not a live form. From "My
    reviews" the reviewer reopens a review still waiting for the others, changes the
    category, saves with Ctrl+Enter and is back on the list; only the review changed."""
    from annotation.models import Sample
    from tests.review.factories import logicvista_dataset

    reviewer = UserFactory.create(role="annotator")
    dataset = logicvista_dataset(1, k=2, members=[reviewer])
    sample = Sample.objects.get(dataset=dataset)
    log_in(page, live_server.url, reviewer)
    page.goto(f"{live_server.url}/review/datasets/{dataset.pk}/")
    page.click("#start-review")
    page.wait_for_url(f"**/review/samples/{sample.pk}/")
    page.keyboard.press("a")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"**/review/datasets/{dataset.pk}/")
    assert Review.objects.get(sample=sample, reviewer=reviewer).values == {}

    # Back to the submitted form: the page says it was submitted, with no live form.
    page.go_back()
    page.wait_for_url(f"**/review/samples/{sample.pk}/")
    page.wait_for_selector("[data-testid=already-submitted]")
    assert page.locator("#review-form").count() == 0
    assert page.locator("#next-sample").is_visible()

    page.click("nav >> text=My reviews")
    page.click("text=Reopen and amend")
    page.wait_for_url(f"**/review/samples/{sample.pk}/?amend=1")
    assert page.is_checked("input[name=decision][value=accept]")
    page.keyboard.press("c")
    page.fill("#f-category", "inductive")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")
    page.wait_for_url("**/review/mine/")
    review = Review.objects.get(sample=sample, reviewer=reviewer)
    assert review.values == {"category_code": "inductive"}
    assert Review.objects.filter(sample=sample).count() == 1
    sample.refresh_from_db()
    assert (sample.category_code, sample.status) == ("deductive", "in_review")
    assert "inductive" in page.inner_text("[data-testid=my-reviews]")
    page.screenshot(path=str(_SCREENSHOTS / "my-reviews.png"))
    page.click("nav >> text=Datasets")
    page.wait_for_url("**/datasets/")
    page.locator("progress").wait_for()
    assert page.locator("progress").count() == 1
    page.screenshot(path=str(_SCREENSHOTS / "dataset-list.png"))


def test_back_to_an_adjudicated_sample_shows_the_decision_not_the_form(
    live_server: Any, page: Any
) -> None:
    """The note is labelled required; after saving the decision the lead is on the list, and
    Back shows the sample as adjudicated (who, what) with no live form; the sample was
    adjudicated once."""
    from annotation.models import Sample, SampleRevision
    from tests.review.factories import logicvista_dataset, submit

    lead = UserFactory.create(role="lead")
    dataset = logicvista_dataset(1)
    sample = Sample.objects.get(dataset=dataset)
    submit(UserFactory.create(), sample)
    submit(UserFactory.create(), Sample.objects.get(pk=sample.pk), "reject")
    log_in(page, live_server.url, lead)
    page.goto(f"{live_server.url}/review/samples/{sample.pk}/adjudicate/")
    assert "(required)" in page.inner_text("label[for=id_note]")
    assert page.get_attribute("#id_note", "required") is not None
    page.fill("#id_note", "The image shows it.")
    page.click("form.card [type=submit]")
    page.wait_for_url(f"**/review/datasets/{dataset.pk}/adjudication/")
    revisions = SampleRevision.objects.filter(sample=sample).count()

    page.go_back()
    page.wait_for_url(f"**/review/samples/{sample.pk}/adjudicate/")
    page.wait_for_selector("[data-testid=already-adjudicated]")
    assert lead.username in page.inner_text("[data-testid=already-adjudicated]")
    assert page.locator("#id_note").count() == 0
    assert SampleRevision.objects.filter(sample=sample).count() == revisions
    assert Sample.objects.get(pk=sample.pk).status == "verified"
