"""The Content-Security-Policy in real headless Chromium: the pages of the journey, from the
dataset list to the audit report, load and run without a single policy violation, and the
language menu still switches the interface (its handler lives in a static script)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation.imports import services as import_services
from annotation.models import ImportSourceKind
from annotation.snapshots import services as snapshot_services
from judging import services as judging_services
from tests.annotation.factories import UserFactory
from tests.annotation.imports_support import mmooc_record, write_lines
from tests.judging import audit_factories as af
from tests.judging.factories import rule_judge
from tests.review.factories import open_queue, trimodal_pair
from tests.support.browser import chromium, sign_in

# Playwright's sync API runs an event loop in this thread; the ORM calls below are plain
# synchronous calls between browser steps.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Records every violation in the page, before any of the page's own scripts run.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(
    event.violatedDirective + " " + (event.blockedURI || "inline") + " at " +
    (event.sourceFile || location.pathname) + ":" + event.lineNumber
  );
});
"""


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


class Visitor:
    """One browser page that gathers policy violations from events and the console."""

    def __init__(self, browser: Any, base: str, user: Any | None) -> None:
        self.base = base
        self.context = browser.new_context(viewport={"width": 1300, "height": 900})
        if user is not None:
            sign_in(self.context, base, user)
        self.context.add_init_script(RECORD_VIOLATIONS)
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.page.on("console", self._console)
        self.visited: list[str] = []

    def _console(self, message: Any) -> None:
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            self.console.append(message.text)

    def violations(self) -> list[str]:
        return list(self.page.evaluate("window.__violations || []")) + self.console

    def visit(self, path: str) -> Any:
        """Open a page; fail on any violation while it loads and runs its first scripts."""
        response = self.page.goto(self.base + path)
        assert response is not None and response.status == 200, path
        assert "unsafe-inline" not in response.headers["content-security-policy"]
        self.page.wait_for_load_state("load")
        # Deferred scripts have run by "load"; a tick more lets pollers make a first call.
        self.page.wait_for_timeout(300)
        assert self.violations() == [], path
        self.visited.append(path)
        return self.page


def test_the_journey_runs_without_a_policy_violation(
    live_server: Any, browser: Any, tmp_path: Path
) -> None:
    """Every page of the journey, with images, audio, SVG charts and live progress."""
    lead = UserFactory.create(role="lead")
    dataset, _ = af.scoring_dataset(n_samples=3, models=("gpt-4o",))
    audit_set = af.draw(dataset, size=2, double_rating_fraction=0)
    job = judging_services.judge_job_start(dataset=dataset, task="scoring", judges=[rule_judge()])
    snapshot = snapshot_services.snapshot_create(
        dataset=dataset, name="v1", format="jsonl", queue=False
    )
    import_job = import_services.import_job_create(
        dataset=dataset,
        format="mmooc",
        source_kind=ImportSourceKind.SERVER_PATH,
        source=str(write_lines(tmp_path / "m.jsonl", [mmooc_record(1)])),
        trusted=True,
        queue=False,
    )
    unsafe, _ = trimodal_pair()
    open_queue(unsafe.dataset, k=2, members=[lead])
    sample = dataset.samples.first()
    assert sample is not None

    anonymous = Visitor(browser, live_server.url, None)
    anonymous.visit("/login/")

    visitor = Visitor(browser, live_server.url, lead)
    for path in [
        "/",
        "/datasets/",
        f"/datasets/{dataset.pk}/",
        f"/datasets/{dataset.pk}/samples/",
        f"/samples/{sample.pk}/",
        f"/datasets/{dataset.pk}/import/",
        f"/imports/{import_job.pk}/",
        f"/datasets/{dataset.pk}/judging/",
        f"/judge-jobs/{job.pk}/",
        f"/datasets/{dataset.pk}/leaderboard/",
        "/judges/",
        f"/datasets/{dataset.pk}/audits/",
        f"/datasets/{dataset.pk}/audits/new/",
        f"/audits/{audit_set.pk}/",
        f"/audits/{audit_set.pk}/statistics/",
        f"/audits/{audit_set.pk}/report/",
        f"/datasets/{dataset.pk}/snapshots/",
        f"/snapshots/{snapshot.pk}/",
        f"/datasets/{dataset.pk}/members/",
        f"/datasets/{dataset.pk}/taxonomy/",
        f"/review/datasets/{unsafe.dataset_id}/",
        f"/review/datasets/{unsafe.dataset_id}/progress/",
        "/review/mine/",
        "/account/token/",
    ]:
        visitor.visit(path)

    page = visitor.page
    # The rating form, reached as an auditor does, from the audit set's page.
    visitor.visit(f"/audits/{audit_set.pk}/")
    page.click("#start-rating")
    page.wait_for_url("**/audit-items/*/rate/")
    page.wait_for_load_state("load")
    assert visitor.violations() == []

    # The workbench with an image and audio: the viewer is sized by the static script.
    visitor.visit(f"/review/datasets/{unsafe.dataset_id}/")
    page.click("#start-review")
    page.wait_for_url("**/review/samples/*/")
    page.wait_for_function("() => document.getElementById('audio').readyState >= 1")
    page.wait_for_function("() => document.querySelector('.zoom-image').complete")
    ratio = page.evaluate("document.querySelector('[data-viewer]').style.aspectRatio")
    assert ratio.replace(" ", "") != ""
    assert visitor.violations() == []

    # The language menu submits itself on change, in both directions.
    visitor.visit("/datasets/")
    with page.expect_navigation():
        page.select_option("#language-select", "zh-hans")
    assert page.get_attribute("html", "lang") == "zh-hans"
    with page.expect_navigation():
        page.select_option("#language-select", "en")
    assert page.get_attribute("html", "lang") == "en"
    assert visitor.violations() == []


@pytest.mark.s3
@pytest.mark.parametrize("allowed", [True, False])
def test_media_on_s3_load_only_from_an_allowed_origin(
    live_server: Any, browser: Any, settings: Any, s3_storage: str, s3_endpoint: str, allowed: bool
) -> None:
    """Media on S3 reach the page by a redirect to a presigned URL on the storage's host:
    with that origin in the policy (what CSP_MEDIA_ORIGINS derives) the image and the audio
    load; without it the browser blocks them, so the origin is truly needed."""
    scheme, _, rest = s3_endpoint.partition("://")
    origin = f"{scheme}://{rest.split('/', 1)[0]}"
    directives = dict(settings.CONTENT_SECURITY_POLICY["DIRECTIVES"])
    if allowed:
        directives["img-src"] = [*directives["img-src"], origin]
        directives["media-src"] = [*directives["media-src"], origin]
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": directives}
    reviewer = UserFactory.create(role="annotator")
    unsafe, _ = trimodal_pair()
    open_queue(unsafe.dataset, k=2, members=[reviewer])

    visitor = Visitor(browser, live_server.url, reviewer)
    page = visitor.page
    page.goto(f"{live_server.url}/review/datasets/{unsafe.dataset_id}/")
    page.click("#start-review")
    page.wait_for_url("**/review/samples/*/")
    if allowed:
        page.wait_for_function("() => document.querySelector('.zoom-image').naturalWidth > 0")
        page.wait_for_function("() => document.getElementById('audio').readyState >= 1")
        assert visitor.violations() == []
    else:
        page.wait_for_function("() => window.__violations.length >= 1")
        blocked = " ".join(visitor.violations())
        assert "img-src" in blocked and origin in blocked
