"""Comparing snapshots in real headless Chromium, from an empty site with real LogicVista items:
a lead imports four items and builds a snapshot; re-imports the source with an explanation
edited and builds a second; re-imports with an answer changed and a fifth item, takes one down
and builds a third; then compares the third with the first on its page and sees the ids added
and taken down and each changed sample's fields old → new."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from annotation.models import Dataset, Sample, SampleStatus, Snapshot
from tests.annotation.journey_steps import (
    WAIT,
    lead_and_two_annotators,
    lead_imports_logicvista,
    search_and_take_down,
)
from tests.annotation.test_journey_browser import JOURNEY_MARKS, LOGICVISTA, page

pytestmark = JOURNEY_MARKS
__all__ = ["page"]  # the Chromium page fixture, shared with the first journey

EXPLAINED, ANSWERED, TAKEN_DOWN = "v1_287", "v1_289", "v1_290"
# The last words of EXPLAINED's long reasoning, and what the second import says instead.
OLD_END, NEW_END = "F = 0.75.", "F = 0.80."


def _zip(target: Path, n: int, edits: dict[str, dict[str, str]]) -> Path:
    """A zip of the first n real LogicVista items, with ``edits`` applied to some of them."""
    items = json.loads((LOGICVISTA / "dataset.json").read_text(encoding="utf-8"))
    chosen = {key: {**item, **edits.get(key, {})} for key, item in list(items.items())[:n]}
    with zipfile.ZipFile(target, "w") as archive:
        archive.writestr("dataset.json", json.dumps(chosen))
        for item in chosen.values():
            name = item["imagename"]
            archive.write(LOGICVISTA / "images" / name, f"images/{name}")
    return target


def _reimport(page: Any, base: str, dataset: Dataset, upload: Path) -> None:
    """The lead uploads the source again from the dataset page; the worker imports it."""
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click(f"a[href='/datasets/{dataset.pk}/import/']")
    page.select_option("#id_format", "logicvista")
    page.set_input_files("#id_file", str(upload))
    page.click("main form [type=submit]")
    page.wait_for_url("**/imports/*/")
    page.wait_for_function(
        "() => document.querySelector('[data-status]').dataset.status === 'succeeded'", timeout=WAIT
    )


def _build(page: Any, base: str, dataset: Dataset, name: str) -> Snapshot:
    """The lead builds a JSON lines snapshot of every sample still in the dataset."""
    page.goto(f"{base}/datasets/{dataset.pk}/")
    page.click(f"a[href='/datasets/{dataset.pk}/snapshots/']")
    page.fill("#id_name", name)
    page.select_option("#id_format", "jsonl")
    for box in page.locator("input[name=statuses]").all():
        box.check()
    page.click("main form [type=submit]")
    page.wait_for_selector("a.button:has-text('Download')", timeout=WAIT)
    return Snapshot.objects.get(dataset=dataset, name=name)


def test_a_lead_compares_the_third_snapshot_with_the_first(
    live_server: Any, live_worker: Any, page: Any, tmp_path: Path
) -> None:
    lead, _first, _second = lead_and_two_annotators()
    base = live_server.url
    items = json.loads((LOGICVISTA / "dataset.json").read_text(encoding="utf-8"))
    reasoning = items[EXPLAINED]["reasoning"]
    assert reasoning.endswith(OLD_END) and len(reasoning) > 500
    old_answer = items[ANSWERED]["answer"]
    new_answer = "C" if old_answer != "C" else "B"
    added = list(items)[4]

    dataset = lead_imports_logicvista(page, base, lead, _zip(tmp_path / "a.zip", 4, {}))
    v1 = _build(page, base, dataset, "v1")
    explained = {EXPLAINED: {"reasoning": reasoning[: -len(OLD_END)] + NEW_END}}
    _reimport(page, base, dataset, _zip(tmp_path / "b.zip", 4, explained))
    _build(page, base, dataset, "v2")
    answered = {**explained, ANSWERED: {"answer": new_answer}}
    _reimport(page, base, dataset, _zip(tmp_path / "c.zip", 5, answered))
    search_and_take_down(page, base, dataset, "five times as often", 1)
    assert Sample.objects.get(dataset=dataset, external_id=TAKEN_DOWN).status == (
        SampleStatus.REMOVED
    )
    v3 = _build(page, base, dataset, "v3")

    # The third snapshot's page compares with the second by default.
    summary = page.locator("#snapshot-diff-summary")
    assert "Against v2: 1 added, 1 removed (1 taken down), 1 changed" in summary.inner_text()
    assert page.locator("#diff-changed").inner_text().count(ANSWERED) == 1

    # The lead chooses the first snapshot instead.
    page.select_option("#id_against", str(v1.pk))
    page.click("#snapshot-compare [type=submit]")
    page.wait_for_url(f"**/snapshots/{v3.pk}/?against={v1.pk}")
    text = page.locator("#snapshot-diff-summary").inner_text()
    assert "Against v1: 1 added, 1 removed (1 taken down), 2 changed, 1 unchanged." in text
    assert page.locator("#diff-added").inner_text().split() == [added]
    assert page.locator("#diff-taken-down").inner_text().split() == [TAKEN_DOWN]

    rows = page.locator("#diff-changed tbody tr")
    changes = {}
    for i in range(rows.count()):
        cells = rows.nth(i).locator("td")
        sample = rows.nth(i).get_attribute("data-sample")
        field = cells.nth(1).inner_text()
        changes[(sample, field)] = (cells.nth(2).inner_text(), cells.nth(3).inner_text())
    assert set(changes) == {(EXPLAINED, "explanation"), (ANSWERED, "reference_answer")}
    assert changes[(ANSWERED, "reference_answer")] == (old_answer, new_answer)
    old, new = changes[(EXPLAINED, "explanation")]
    # The long reasoning is shortened around the edit, at its end.
    assert old.startswith("…") and old.endswith(OLD_END) and len(old) < len(reasoning)
    assert new.startswith("…") and new.endswith(NEW_END)
