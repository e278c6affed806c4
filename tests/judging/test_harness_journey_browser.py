"""The harnesses' journey in real headless Chromium with a real Celery worker, from a site with
one lead only: the lead makes an MMOOC dataset and imports its samples, uploads the folder
lmms-eval wrote (--log_samples) and confirms its doc order on the match preview, uploads the
xlsx files VLMEvalKit wrote (predictions and evaluated), runs the site's rule judge, sees both
models on the leaderboard with the harnesses' metrics as judges beside the rule judge, then
plans, draws and rates an audit whose statistics compare the humans with every judge, the
harnesses' included."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation.models import Dataset
from core import roles
from judging.formats.reference import EXAMPLES
from judging.models import AuditItem, AuditSet, ModelResponse, Verdict
from tests.annotation.factories import UserFactory
from tests.annotation.journey_steps import WAIT, create_and_import
from tests.annotation.test_journey_browser import JOURNEY_MARKS
from tests.conftest import worker_on
from tests.judging.factories import rule_judge
from tests.support.browser import chromium, log_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # ORM calls between Playwright steps

pytestmark = JOURNEY_MARKS

LMMS = EXAMPLES / "lmms_eval" / "Qwen__Qwen2.5-VL-7B-Instruct"
VLM = EXAMPLES / "vlmevalkit" / "outputs" / "InternVL3-8B" / "T20261201_Gab12cd34"
HARNESS_JUDGES = (
    "lmms-eval mmooc mmooc_score",
    "lmms-eval mmooc exact_match",
    "VLMEvalKit MMOOC gpt4o-mini",
)


@pytest.fixture
def page() -> Iterator[Any]:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        yield context.new_page()
        context.close()


def _job_ends(page: Any, selector: str = "#import-job") -> str:
    page.wait_for_function(
        "(selector) => ['succeeded', 'succeeded_with_errors', 'failed', 'with_errors']"
        ".includes(document.querySelector(selector).dataset.status)",
        arg=selector,
        timeout=WAIT,
    )
    return str(page.locator(selector).get_attribute("data-status"))


def test_harness_outputs_reach_the_leaderboard_and_an_audit(
    live_server: Any, page: Any, tmp_path: Path
) -> None:
    lead = UserFactory.create(role=roles.LEAD)
    rule = rule_judge()  # made by a data migration on a real site
    assert not Dataset.objects.exists() and not Verdict.objects.exists()
    base = live_server.url
    with worker_on(os.environ["REDIS_URL"]):
        log_in(page, base, lead)
        dataset = create_and_import(
            page,
            base,
            name="MMOOC",
            kind="image_question",
            preset="mmooc",
            fmt="mmooc",
            upload=EXAMPLES / "samples" / "mmooc.jsonl",
        )
        page.goto(f"{base}/datasets/{dataset.pk}/judging/")
        assert page.locator("a[href='/formats/#responses']").count() == 1

        # lmms-eval's folder, as the harness wrote it, through the folder input.
        page.select_option("#upload-form select[name=kind]", "responses")
        page.select_option("#upload-form select[name=format]", "auto")
        page.set_input_files("#upload-form input[name=folder]", str(LMMS))
        assert "Qwen__Qwen2.5-VL-7B-Instruct/" in page.input_value("#id_folder_paths")
        page.click("#upload-form [type=submit]")
        page.wait_for_selector("#confirm-form")
        assert "Read as lmms-eval." in page.inner_text("#detected-format")
        preview = page.inner_text(".harness-preview")
        assert "4 of the first 4 rows match a sample; 4 targets equal its reference." in preview
        page.check("input[name=doc_order][value=position]")
        page.click("#confirm-form button[name=confirm]")
        page.wait_for_url("**/imports/*/")
        assert _job_ends(page) == "succeeded"

        # VLMEvalKit's prediction and evaluated files, picked together, with the model named.
        page.goto(f"{base}/datasets/{dataset.pk}/judging/")
        page.select_option("#upload-form select[name=kind]", "responses")
        page.fill("#upload-form input[name=model]", "InternVL3-8B")
        page.set_input_files("#upload-form input[name=file]", sorted(str(p) for p in VLM.iterdir()))
        page.click("#upload-form [type=submit]")
        page.wait_for_url("**/imports/*/")
        assert _job_ends(page) == "succeeded"
        assert "match the imported verdicts" in page.inner_text("#import-job")

        # The site's own judge scores every response.
        page.goto(f"{base}/datasets/{dataset.pk}/judging/")
        page.select_option("#id_task", "scoring")
        page.check(f"input[name=judges][value='{rule.pk}']")
        page.click("form:has(#id_task) [type=submit]")
        page.wait_for_url("**/judge-jobs/*/")
        assert _job_ends(page, "#job-progress") == "succeeded"

        # The worker counts the verdicts a few seconds after the job ends; the page says so
        # until then, and the lead reloads it.
        page.goto(f"{base}/datasets/{dataset.pk}/leaderboard/")
        deadline = time.monotonic() + 120
        while "No scored responses yet." in page.inner_text("main"):
            assert time.monotonic() < deadline, page.inner_text("main")
            page.wait_for_timeout(1000)
            page.reload()
        board = page.inner_text("main")
        for name in ("Qwen/Qwen2.5-VL-7B-Instruct", "InternVL3-8B"):
            assert name in board
        for judge in (*HARNESS_JUDGES, "rule"):
            assert judge in board, judge
        assert set(
            ModelResponse.objects.filter(dataset=dataset).values_list("model_name", flat=True)
        ) == {
            "Qwen/Qwen2.5-VL-7B-Instruct",
            "InternVL3-8B",
        }

        # An audit of every response, rated by the lead; its figures name each judge.
        page.goto(f"{base}/datasets/{dataset.pk}/audits/new/")
        page.select_option("select[name=task]", "scoring")
        page.fill("input[name=size]", "8")
        page.fill("input[name=floor]", "1")
        page.fill("input[name=double_rating_fraction]", "0")
        page.fill("input[name=name]", "harnesses")
        page.click("#preview")
        page.wait_for_selector("#allocation-table", timeout=WAIT)
        page.click("#draw")
        page.wait_for_url("**/audits/*/")
        page.wait_for_selector("#start-rating", timeout=WAIT)
        page.wait_for_function(
            "() => document.getElementById('draw-status') === null", timeout=WAIT
        )
        audit_set = AuditSet.objects.get(dataset=dataset, name="harnesses")
        items = list(AuditItem.objects.filter(audit_set=audit_set).order_by("position"))
        assert {i.response.model_name for i in items if i.response} == {
            "Qwen/Qwen2.5-VL-7B-Instruct",
            "InternVL3-8B",
        }
        page.click("#start-rating")
        for item in items:
            page.wait_for_url(f"**/audit-items/{item.pk}/rate/")
            page.keyboard.press("1")
            page.keyboard.press("w")
            page.keyboard.press("Enter")
        page.wait_for_url(f"**/audits/{audit_set.pk}/")
        page.goto(f"{base}/audits/{audit_set.pk}/statistics/")
        page.wait_for_function(
            "() => document.getElementById('computed-state').textContent"
            ".includes('Computed by a worker at') && !document.getElementById('computing')",
            timeout=WAIT,
        )
        figures = page.inner_text("main")
        for judge in (*HARNESS_JUDGES, "rule"):
            assert judge in figures, judge
