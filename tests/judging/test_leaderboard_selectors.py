"""The leaderboard as pages and the API read it: groups of its own for ungrouped items, n = 0
reading "—" in chart and table alike, and the filter by prompt version."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import Sample, SampleStatus
from judging import selectors
from judging.leaderboard import UNGROUPED
from judging.models import Judge, JudgeTask, ModelResponse, Verdict
from tests.annotation.factories import mmooc_dataset
from tests.conftest import client_for
from tests.judging.factories import (
    LOGICVISTA,
    JudgeFactory,
    bulk_responses,
    bulk_samples,
    logicvista_dataset,
    rule_judge,
    run_job,
)
from tests.support.html import element, elements, text

pytestmark = pytest.mark.django_db


def _scored(*, versions: tuple[str, ...] = ("v1",), ungrouped: int = 0) -> Any:
    """Six samples (two out-of-context), one model, one judge scoring every response once per
    prompt version: 1.0 under v1, 0.0 under any other version. The first ``ungrouped``
    samples lose their answerability group."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 6)
    Sample.objects.filter(pk__in=[s.pk for s in samples[:ungrouped]]).update(answerability_group="")
    judge = Judge.objects.filter(name="j").first() or JudgeFactory.create(name="j")
    rows = []
    for response in bulk_responses(samples, ["m"]):
        for version in versions:
            score = 1 if version == "v1" else 0
            rows.append(
                Verdict(
                    judge=judge,
                    task=JudgeTask.MMOOC_SCORING,
                    prompt_version=version,
                    sample_id=response.sample_id,
                    response=response,
                    answer_score=score,
                    reasoning_score=float(score),
                )
            )
    Verdict.objects.bulk_create(rows)
    return dataset


def test_items_without_a_group_form_their_own_group() -> None:
    """A sample with no answerability group (here one with a refusal reference too) counts in
    "ungrouped", never in shifted in-context or out-of-context; the group shows only then."""
    board = selectors.leaderboard(dataset=_scored(ungrouped=2))
    assert board.groups == ["shifted_ic", "ooc", UNGROUPED]
    groups = board.models[0].ensemble.groups
    # bulk_samples: 0 and 3 are out-of-context, 0 and 1 lose their group.
    assert (groups["shifted_ic"].n, groups["ooc"].n, groups[UNGROUPED].n) == (3, 1, 2)
    assert selectors.leaderboard(dataset=_scored()).groups == ["shifted_ic", "ooc"]


def test_the_leaderboard_filters_by_prompt_version() -> None:
    """Unfiltered, every version counts; filtered, only that version's verdicts; the known
    versions are listed and an unknown one is reported as such."""
    dataset = _scored(versions=("v1", "v2"))
    every = selectors.leaderboard(dataset=dataset)
    assert every.prompt_versions == ["v1", "v2"] and every.prompt_version is None
    assert every.models[0].ensemble.overall.mean == pytest.approx(0.5)
    v2 = selectors.leaderboard(dataset=dataset, prompt_version="v2")
    assert v2.models[0].ensemble.overall.mean == 0.0 and v2.models[0].ensemble.overall.n == 6
    unknown = selectors.leaderboard(dataset=dataset, prompt_version="v9")
    assert unknown.unknown_prompt_version and unknown.models == []


def _chart_texts(page: str) -> list[str]:
    return [
        re.sub(r"\s+", " ", t).strip() for t in re.findall(r"<text[^>]*>(.*?)</text>", page, re.S)
    ]


def test_an_empty_cell_reads_a_dash_in_chart_and_table(lead: Any) -> None:
    """Without out-of-context items, the chart's ooc bar reads "ooc — (n=0)" (no 0.000 and no
    bar), as its table cell reads "—"."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 3)
    Sample.objects.filter(pk__in=[s.pk for s in samples]).update(answerability_group="shifted_ic")
    judge = JudgeFactory.create(name="j")
    Verdict.objects.bulk_create(
        Verdict(
            judge=judge,
            task=JudgeTask.MMOOC_SCORING,
            prompt_version="v1",
            sample_id=r.sample_id,
            response=r,
            answer_score=1,
            reasoning_score=1.0,
        )
        for r in bulk_responses(samples, ["m"])
    )
    client = Client()
    client.force_login(lead)
    page = client.get(reverse("judging:leaderboard", args=[dataset.pk])).content.decode()
    texts = _chart_texts(page)
    assert "ooc — (n=0)" in texts
    assert "shifted_ic 1.000 [0.439, 1.000] (n=3)" in texts  # Wilson 95 %
    assert not any("0.000" in t for t in texts)
    assert page.count("<rect") == 1
    counts = [(td, text(span)) for td in elements(page, "td") for span in elements(td, "span")]
    cells = [text(td) for td, count in counts if count == "n=0"]
    assert cells and all(cell == "— n=0" for cell in cells)


def test_the_page_and_the_api_filter_by_prompt_version(lead: Any, auditor: Any) -> None:
    """The page offers the versions and filters by the chosen one (an unknown one is said so);
    the API takes ``prompt_version`` and answers 404 naming the known ones for an unknown."""
    dataset = _scored(versions=("v1", "v2"))
    annotation_services.dataset_add_member(dataset=dataset, user=auditor)
    browser = Client()
    browser.force_login(auditor)
    url = reverse("judging:leaderboard", args=[dataset.pk])
    page = browser.get(url).content.decode()
    assert element(element(page, "select", name="prompt_version"), "option", value="v2")
    filtered = browser.get(url, {"prompt_version": "v2"}).content.decode()
    assert "shifted_ic 0.000 [0.000, 0.490] (n=4)" in _chart_texts(filtered)
    assert "v9" in browser.get(url, {"prompt_version": "v9"}, follow=True).content.decode()
    api = reverse("api_leaderboard", args=[dataset.pk])
    reply = client_for(auditor).get(api, {"prompt_version": "v1"})
    assert reply.status_code == 200
    assert reply.json()["prompt_version"] == "v1"
    assert reply.json()["prompt_versions"] == ["v1", "v2"]
    assert reply.json()["models"][0]["ensemble"]["overall"]["mean"] == 1.0
    refused = client_for(lead).get(api, {"prompt_version": "v9"})
    assert refused.status_code == 404
    assert "v1, v2" in refused.json()["detail"]


def test_defect_9_the_leaderboard_leaves_out_rejected_and_taken_down_samples(
    django_capture_on_commit_callbacks: Any, lead: Any
) -> None:
    """From an empty site: the real LogicVista items with two real models' answers, scored by
    the rule judge. Rejecting one sample and taking another down takes their responses out
    of every figure of the leaderboard (page and API), and the page says how many."""
    dataset = logicvista_dataset()
    samples = {s.external_id: s for s in Sample.objects.filter(dataset=dataset)}
    models = ("GPT4", "LLAVANEXT-7B-mistral")
    rows = []
    for model in models:
        answers = json.loads((LOGICVISTA / "answers" / f"{model}-answers.json").read_text())
        rows += [
            ModelResponse(
                dataset=dataset,
                sample=samples[key],
                model_name=model,
                response=str(answer.get("answer", "")),
            )
            for key, answer in answers.items()
            if key in samples
        ]
    ModelResponse.objects.bulk_create(rows)
    run_job(
        django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[rule_judge()]
    )
    before = {
        row.model: row.ensemble.overall.n for row in selectors.leaderboard(dataset=dataset).models
    }
    rejected, removed = sorted(samples)[:2]
    annotation_services.sample_set_status(
        sample=samples[rejected], status=SampleStatus.REJECTED, by=None
    )
    annotation_services.samples_take_down(
        dataset=dataset,
        samples=Sample.objects.filter(pk=samples[removed].pk),
        by=None,
        reason="takedown request",
    )
    board = selectors.leaderboard(dataset=dataset)
    # LogicVista's taxonomy has no answerability groups: MMOOC's are not shown at n = 0.
    assert board.groups == [UNGROUPED]
    after = {row.model: row.ensemble.overall.n for row in board.models}
    assert after == {model: before[model] - 2 for model in models}
    assert board.left_out_responses == 2 * len(models)
    api = client_for(lead).get(f"/api/datasets/{dataset.pk}/leaderboard/").json()
    assert {row["model"]: row["ensemble"]["overall"]["n"] for row in api["models"]} == after
    client = Client()
    client.force_login(lead)
    page = client.get(reverse("judging:leaderboard", args=[dataset.pk])).content.decode()
    assert "4 scored responses on such samples are left out" in page
