"""The steps a lead and the annotators take in the browser journeys from an empty site, shared
by the LogicVista and the tri-modal journey: each step uses only links, forms and keys of the
pages, never the admin or a shell."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from django.forms.models import model_to_dict

from annotation.models import Dataset, Sample, SampleStatus
from tests.annotation.factories import UserFactory
from tests.support.browser import log_in

WAIT = 60000


def lead_and_two_annotators() -> tuple[Any, Any, Any]:
    """The only data of a journey's empty site: a lead and two annotators."""
    lead = UserFactory.create(role="lead")
    first, second = UserFactory.create(role="annotator"), UserFactory.create(role="annotator")
    assert not Dataset.objects.exists() and not Sample.objects.exists()
    return lead, first, second


def content(sample: Sample) -> dict[str, Any]:
    """A sample's stored fields other than those the journey moves on purpose (its status) and
    the revision counter that every write advances; its media as a set of asset ids."""
    values = model_to_dict(sample)
    for moved in ("status", "revision", "id"):
        values.pop(moved, None)
    values["media"] = {asset.pk for asset in values.get("media", [])}
    return values


def create_and_import(
    page: Any, base: str, *, name: str, kind: str, preset: str, fmt: str, upload: Path
) -> Dataset:
    """The lead creates the dataset and uploads the source; the worker imports it."""
    page.goto(f"{base}/datasets/")
    page.click("a[href='/datasets/new/']")
    page.fill("#id_name", name)
    page.select_option("#id_kind", kind)
    page.select_option("#id_preset", preset)
    page.click("main form [type=submit]")
    page.wait_for_url("**/datasets/*/")
    dataset = Dataset.objects.get(name=name)
    page.click("nav.journey a.button")  # "Import samples"
    page.select_option("#id_format", fmt)
    page.set_input_files("#id_file", str(upload))
    page.click("main form [type=submit]")
    page.wait_for_url("**/imports/*/")
    page.wait_for_function(
        "() => document.querySelector('[data-status]').dataset.status === 'succeeded'", timeout=WAIT
    )
    return dataset


def lead_imports_logicvista(page: Any, base: str, lead: Any, upload: Path) -> Dataset:
    """The lead logs in and imports the LogicVista file into a new image-question dataset."""
    log_in(page, base, lead)
    return create_and_import(
        page,
        base,
        name="LogicVista",
        kind="image_question",
        preset="",
        fmt="logicvista",
        upload=upload,
    )


def open_review(page: Any, base: str, dataset: Dataset, annotators: Iterable[Any], k: int) -> int:
    """Members, k and everything imported sent to review, all from the dataset page; the
    number of samples sent."""
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-members")
    for annotator in annotators:
        page.fill("#id_username", annotator.username)
        page.click("#member-add [type=submit]")
        page.wait_for_selector(f"#members td:text-is('{annotator.username}')")
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-review")
    page.fill("#id_overlap", str(k))
    page.click(".settings-form [type=submit]")
    page.wait_for_load_state()
    imported = Sample.objects.filter(dataset=dataset, status=SampleStatus.IMPORTED).count()
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#next-send-to-review")
    page.click("#bulk-confirm")
    page.wait_for_selector(f"text={imported} samples sent to review")
    return imported


def review_all(
    page: Any,
    base: str,
    dataset: Dataset,
    reviewer: Any,
    act: Callable[[Any, str], None],
    limit: int | None = None,
) -> list[str]:
    """Review every sample the queue hands out (or the first ``limit``); ``act`` decides each
    one by keyboard, given the sample's heading. The headings seen, in order."""
    page.context.clear_cookies()
    log_in(page, base, reviewer)
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-review")
    page.click("#start-review")
    seen: list[str] = []
    while "/review/samples/" in page.url and (limit is None or len(seen) < limit):
        page.wait_for_selector("#submit-next")
        heading = page.locator("h1").inner_text().strip()
        seen.append(heading)
        page.locator("body").focus()
        act(page, heading)
        current = page.url
        page.keyboard.press("Control+Enter")
        page.wait_for_function(
            "([url]) => location.href !== url"
            " || document.getElementById('form-error').textContent !== ''",
            arg=[current],
            timeout=WAIT,
        )
        assert page.url != current, page.locator("#form-error").inner_text()
    return seen


def adjudicate_untouched(page: Any, base: str, dataset: Dataset, external_id: str) -> str:
    """The lead opens the adjudication from the dataset page's next steps and accepts the
    sample as it stands; the text of the pair warning shown before saving ("" when none)."""
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#next-adjudicate")
    page.click(f"a:text-is('{external_id}')")
    warning = page.locator("[data-testid=pair-warning]")
    shown = warning.inner_text() if warning.count() else ""
    page.check("input[name=decision][value=accept]")
    page.fill("textarea[name=note]", "The sample holds as imported.")
    page.click("main form.card button[type=submit]")
    page.wait_for_load_state()
    return shown


def search_and_take_down(page: Any, base: str, dataset: Dataset, search: str, n: int) -> None:
    """The lead searches the sample list and takes the n matching samples down."""
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click("#link-samples")
    page.fill("input[name=search]", search)
    page.click("#apply-filter")
    page.wait_for_selector(f"text={n} sample{'s match' if n != 1 else ' matches'}.")
    for row in range(n):
        page.locator("input[name=ids]").nth(row).check()
    page.select_option("#bulk-scope", "selected")
    page.select_option("#bulk-action", "take_down")
    page.fill("#bulk-reason", "Licence withdrawn")
    page.click("#bulk-submit")
    question = page.locator("#bulk-question").inner_text()
    assert f"Take down {n} of the {n} selected sample" in question, question
    page.click("#bulk-confirm")
    page.wait_for_url("**/samples/**")


def export_and_download(page: Any, base: str, dataset: Dataset, name: str, fmt: str) -> Path:
    """The lead exports a snapshot of the verified samples and downloads it; its path."""
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click(f"a[href='/datasets/{dataset.pk}/snapshots/']")
    page.fill("#id_name", name)
    page.select_option("#id_format", fmt)
    page.click("main form [type=submit]")
    page.wait_for_selector("a.button:has-text('Download')", timeout=WAIT)
    with page.expect_download() as download:
        page.click("a.button:has-text('Download')")
    return Path(download.value.path())
