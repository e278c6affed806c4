"""Tests for judging.selectors.sample_judging: what the sample page shows of the judges."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.models import Sample
from judging import selectors
from judging.models import Judge, JudgeTask, ModelResponse, Verdict
from tests.annotation.factories import mmooc_dataset, mmooc_sample
from tests.judging.factories import JudgeFactory, bulk_responses

pytestmark = pytest.mark.django_db


def score(judge: Judge, response: ModelResponse, answer: int, reasoning: float, **kw: Any) -> None:
    Verdict.objects.create(
        judge=judge,
        task=JudgeTask.MMOOC_SCORING,
        prompt_version="v1",
        sample_id=response.sample_id,
        response=response,
        answer_score=answer,
        reasoning_score=reasoning,
        rationale=f"{judge.name} on {response.model_name}",
        **kw,
    )


def vote(judge: Judge, sample: Sample, label: str, **kw: Any) -> Verdict:
    return Verdict.objects.create(
        judge=judge,
        task=JudgeTask.ANSWERABILITY,
        sample=sample,
        label=label,
        rationale=f"{judge.name} says {label}",
        **{"prompt_version": "v1", **kw},
    )


def _sample() -> Sample:
    return Sample.objects.select_related("dataset").get(pk=mmooc_sample(mmooc_dataset()).pk)


def test_each_response_has_its_verdicts_and_the_judges_mean_as_consensus() -> None:
    """A response's consensus is the mean over judges of each judge's mean over repeats
    (the leaderboard's rule); a failed call is listed but counts for nothing."""
    sample = _sample()
    first, second = bulk_responses([sample], ["model-a", "model-b"])
    a, b, c = JudgeFactory.create(name="a"), JudgeFactory.create(name="b"), JudgeFactory.create()
    score(a, first, 1, 0.5)  # 0.75
    score(a, first, 1, 1.0, repeat=1)  # 1.0: judge a's mean is 0.875
    score(b, first, 0, 0.0)  # 0.0
    Verdict.objects.create(
        judge=c,
        task=JudgeTask.MMOOC_SCORING,
        prompt_version="v1",
        sample=sample,
        response=first,
        error_kind="timeout",
        error="no answer",
    )
    judging = selectors.sample_judging(sample=sample)
    assert [r.response.model_name for r in judging.responses] == ["model-a", "model-b"]
    one, two = judging.responses
    assert len(one.verdicts) == 4 and {v.error_kind for v in one.verdicts} == {"", "timeout"}
    assert one.ensemble is not None and one.ensemble.mean == pytest.approx(0.4375)
    assert one.ensemble.answer == pytest.approx(0.5)
    assert one.judges["a"].mean == pytest.approx(0.875) and set(one.judges) == {"a", "b"}
    assert two.verdicts == [] and two.ensemble is None and second.pk == two.response.pk
    assert judging.answerability == [] and judging.consensus is None and not judging.empty


def test_answerability_counts_each_judges_latest_vote_against_the_samples_label() -> None:
    """The latest verdict of a judge (per repeat) is the one shown and counted: a judge that
    changed its mind to agree with the out-of-context label leaves one disagreeing judge."""
    sample = _sample()  # out-of-context: "unanswerable"
    a, b = JudgeFactory.create(name="a"), JudgeFactory.create(name="b")
    vote(a, sample, "answerable", prompt_version="v0")
    latest = vote(a, sample, "unanswerable")
    vote(b, sample, "answerable")
    judging = selectors.sample_judging(sample=sample)
    assert [v.judge.name for v in judging.answerability] == ["a", "b"]
    assert judging.answerability[0].pk == latest.pk
    assert judging.sample_label == "unanswerable"
    assert judging.consensus is not None and judging.consensus.disagree
    Verdict.objects.filter(judge=b).update(label="unanswerable")
    agreed = selectors.sample_judging(sample=sample).consensus
    assert agreed is not None and agreed.agree and not agreed.disagree


def test_a_sample_nobody_judged_is_empty() -> None:
    """No responses and no verdicts: nothing to show."""
    assert selectors.sample_judging(sample=_sample()).empty


@pytest.mark.parametrize("models, judges, repeats", [(1, 1, 1), (6, 3, 2)])
def test_the_judges_of_a_sample_cost_two_queries(
    models: int, judges: int, repeats: int, django_assert_num_queries: Any
) -> None:
    """However many responses, judges and repeats: one query for the responses, one for
    every verdict with its judge."""
    sample = _sample()
    responses = bulk_responses([sample], [f"model-{i}" for i in range(models)])
    for _ in range(judges):
        judge = JudgeFactory.create()
        vote(judge, sample, "unanswerable")
        for response in responses:
            for repeat in range(repeats):
                score(judge, response, 1, 0.5, repeat=repeat)
    with django_assert_num_queries(2):
        judging = selectors.sample_judging(sample=sample)
        assert sum(len(r.verdicts) for r in judging.responses) == models * judges * repeats
        assert [v.judge.name for v in judging.answerability]
