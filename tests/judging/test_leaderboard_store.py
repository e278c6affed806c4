"""The leaderboard's kept aggregates: they give exactly the leaderboard computed over every
verdict (the reference, tests/judging/leaderboard_reference.py), the page reads them in the
same queries whatever the dataset's size, and no change stays uncounted: a rejected sample,
a new verdict or a dead worker is caught by the marks, the sweep or the next page view."""

from __future__ import annotations

import importlib
import math
from dataclasses import asdict
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from annotation import services as annotation_services
from annotation.models import Dataset, DatasetKind, Sample, SampleStatus
from core.jobs import JobStatus
from judging import leaderboard_store, selectors
from judging.models import (
    Judge,
    JudgeTask,
    LeaderboardCell,
    LeaderboardChange,
    LeaderboardComputation,
    Verdict,
)
from judging.selectors import Leaderboard
from tests.annotation.factories import mmooc_dataset
from tests.conftest import client_for
from tests.judging.factories import JudgeFactory, bulk_responses, bulk_samples
from tests.judging.leaderboard_reference import direct_leaderboard

pytestmark = pytest.mark.django_db

GROUPS = ["shifted_ic", "ooc", "", "ungrouped", "other"]
CATEGORIES = ["MP", "VFP", "", "—"]
FORMATS = ["mcq", "yesno", ""]
SCENARIOS = ["math", "science", ""]
STATUSES = [
    SampleStatus.PENDING_REVIEW,
    SampleStatus.VERIFIED,
    SampleStatus.REJECTED,
    SampleStatus.REMOVED,
]
VERSIONS = ["v1", "v2"]


def _close(a: Any, b: Any, where: str = "") -> None:
    """Equal, floats to 1e-9: both sides sum the same float64 values, in different orders
    (the reference's order is the verdict query's, which nothing fixes either)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), where
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (where, a, b)
    else:
        assert a == b, (where, a, b)


def _order(board: Leaderboard) -> list[str]:
    """The models in the board's order, near-ties (the last bits of a sum) broken by name."""
    means = {row.model: row.ensemble.overall.mean or 0.0 for row in board.models}
    return sorted(means, key=lambda m: (-round(means[m], 9), m))


def assert_same(kept: Leaderboard, direct: Leaderboard) -> None:
    fields = ("task", "groups", "judges", "prompt_versions", "prompt_version")
    assert {f: getattr(kept, f) for f in fields} == {f: getattr(direct, f) for f in fields}
    assert kept.left_out_responses == direct.left_out_responses
    assert [r.model for r in kept.models] == _order(direct) == _order(kept)
    _close(
        {row.model: asdict(row) for row in kept.models},
        {row.model: asdict(row) for row in direct.models},
    )


verdicts = st.lists(
    st.tuples(
        st.integers(0, 5),  # sample
        st.integers(0, 2),  # model
        st.integers(0, 2),  # judge
        st.sampled_from(VERSIONS),
        st.integers(0, 1),  # repeat
        st.one_of(st.none(), st.integers(0, 1)),  # answer score
        st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])),  # reasoning
        st.sampled_from(["", "", "", "timeout"]),  # error kind
        st.sampled_from(["safe", "unsafe", ""]),  # safety label
        st.booleans(),  # the dataset's own task (else the other scoring task)
    ),
    max_size=40,
)
samples = st.lists(
    st.tuples(
        st.sampled_from(GROUPS),
        st.sampled_from(CATEGORIES),
        st.sampled_from(FORMATS),
        st.sampled_from(SCENARIOS),
        st.sampled_from(STATUSES),
    ),
    min_size=6,
    max_size=6,
)


def _dataset(*, trimodal: bool) -> Dataset:
    if trimodal:
        return annotation_services.dataset_create(
            name=f"tri-{Dataset.objects.count()}", kind=DatasetKind.TRIMODAL, preset="mcbench"
        )
    return mmooc_dataset()


def _arrange(trimodal: bool, strata: list[Any], votes: list[Any]) -> Dataset:
    dataset = _dataset(trimodal=trimodal)
    rows = bulk_samples(dataset, len(strata))
    for sample, (group, category, question_format, scenario, status) in zip(
        rows, strata, strict=True
    ):
        fields: dict[str, Any] = {"status": status}
        if trimodal:
            fields |= {
                "safety_label": group if group in ("safe", "unsafe") else "",
                "safety_category": category,
                "safety_subcategory": scenario,
            }
        else:
            fields |= {
                "answerability_group": group,
                "category_code": category,
                "question_format": question_format,
                "scenario": scenario,
            }
        Sample.objects.filter(pk=sample.pk).update(**fields)
    responses = {(r.sample_id, r.model_name): r for r in bulk_responses(rows, ["m0", "m1", "m2"])}
    judges = [
        Judge.objects.get_or_create(name=f"j{i}", defaults={"kind": "external"})[0]
        for i in range(3)
    ]
    own, other = (
        (JudgeTask.MCBENCH_SAFETY, JudgeTask.MMOOC_SCORING)
        if trimodal
        else (JudgeTask.MMOOC_SCORING, JudgeTask.MCBENCH_SAFETY)
    )
    made: dict[tuple[Any, ...], Verdict] = {}
    for s, m, j, version, repeat, answer, reasoning, error, label, mine in votes:
        response = responses[(rows[s].pk, f"m{m}")]
        task = own if mine else other
        made[(j, response.pk, task, version, repeat)] = Verdict(
            judge=judges[j],
            task=task,
            prompt_version=version,
            repeat=repeat,
            sample_id=response.sample_id,
            response=response,
            answer_score=answer,
            reasoning_score=reasoning,
            label=label,
            error_kind=error,
        )
    Verdict.objects.bulk_create(list(made.values()))
    return dataset


@hypothesis_settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(trimodal=st.booleans(), strata=samples, votes=verdicts)
def test_the_kept_aggregates_give_the_leaderboard_computed_over_every_verdict(
    trimodal: bool, strata: list[Any], votes: list[Any]
) -> None:
    """Over any set of verdicts (repeats, prompt versions, failed calls, unscored verdicts,
    the other task's, samples rejected, taken down, ungrouped), the leaderboard read from the
    kept aggregates equals the one computed over every verdict: for every version and none."""
    dataset = _arrange(trimodal, strata, votes)
    leaderboard_store.leaderboard_compute(dataset=dataset)
    for version in (None, *VERSIONS, "v9"):
        kept = selectors.leaderboard(dataset=dataset, prompt_version=version)
        assert kept.computed_at is not None and not kept.pending_since
        assert_same(kept, direct_leaderboard(dataset=dataset, prompt_version=version))


def _scored(n: int) -> Dataset:
    """n samples over several categories and scenarios, three models, two judges."""
    dataset = mmooc_dataset()
    rows = bulk_samples(dataset, n)
    for i, sample in enumerate(rows):
        Sample.objects.filter(pk=sample.pk).update(
            category_code=["MP", "PA", "VFP", "MKB"][i % 4], scenario=["math", "science"][i % 2]
        )
    judges = [JudgeFactory.create(name=f"q-{dataset.pk}-{i}") for i in range(2)]
    Verdict.objects.bulk_create(
        Verdict(
            judge=judge,
            task=JudgeTask.MMOOC_SCORING,
            prompt_version="v1",
            sample_id=response.sample_id,
            response=response,
            answer_score=response.pk % 2,
            reasoning_score=0.5,
        )
        for response in bulk_responses(rows, ["m1", "m2", "m3"])
        for judge in judges
    )
    return dataset


def test_the_page_and_the_api_read_the_leaderboard_in_queries_independent_of_size(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """At 8 and at 80 samples the page and the API cost the same queries: the computation's
    state with its prompt versions, and the cells (besides the session, the dataset, its
    taxonomy and the audit)."""
    client = Client()
    client.force_login(lead)
    api = client_for(lead)
    for n in (8, 80):
        dataset = _scored(n)
        leaderboard_store.leaderboard_compute(dataset=dataset)
        page_url = reverse("judging:leaderboard", args=[dataset.pk])
        api_url = reverse("api_leaderboard", args=[dataset.pk])
        client.get(page_url)
        api.get(api_url)  # the user's roles, then cached on the user
        # session, user, roles, dataset, taxonomy groups, the computation, cells, audit set
        with django_assert_num_queries(8):
            page = client.get(page_url)
        assert page.status_code == 200 and "<svg" in page.content.decode()
        # dataset, taxonomy groups, the computation, cells
        with django_assert_num_queries(4):
            board = api.get(api_url).json()
        assert board["models"][0]["ensemble"]["overall"]["n"] == n


def test_a_rejected_sample_is_marked_and_left_out_at_the_next_view() -> None:
    """Rejecting a sample marks the dataset's leaderboard as changed (the trigger); the next
    read requests the recomputation, which leaves the sample's responses out and clears the
    mark."""
    dataset = _scored(6)
    leaderboard_store.leaderboard_compute(dataset=dataset)
    assert not LeaderboardChange.objects.filter(dataset=dataset).exists()
    sample = Sample.objects.filter(dataset=dataset).order_by("id").first()
    assert sample is not None
    Sample.objects.filter(pk=sample.pk).update(explanation="edited")  # not counted: no mark
    assert not LeaderboardChange.objects.filter(dataset=dataset).exists()
    Sample.objects.filter(pk=sample.pk).update(status=SampleStatus.VERIFIED)  # still counted
    assert not LeaderboardChange.objects.filter(dataset=dataset).exists()
    Sample.objects.filter(pk=sample.pk).update(status=SampleStatus.REJECTED)
    assert LeaderboardChange.objects.filter(dataset=dataset).count() == 1
    board = selectors.leaderboard(dataset=dataset)
    assert board.left_out_responses == 3 and board.pending_since is None
    assert {row.ensemble.overall.n for row in board.models} == {5}
    assert not LeaderboardChange.objects.filter(dataset=dataset).exists()
    assert_same(board, direct_leaderboard(dataset=dataset))


def test_new_verdicts_wait_for_the_refresh_interval_and_the_page_says_so(
    lead: Any, settings: Any
) -> None:
    """A verdict written after the computation marks it as pending: the page says since when
    (in English and in Chinese) and keeps the counted figures until the refresh interval has
    passed; then the sweep requests the recomputation."""
    settings.LEADERBOARD_REFRESH_SECONDS = 3600
    dataset = _scored(6)
    leaderboard_store.leaderboard_compute(dataset=dataset)
    judge = Judge.objects.filter(name__startswith=f"q-{dataset.pk}-").first()
    assert judge is not None
    new = bulk_responses(list(Sample.objects.filter(dataset=dataset)), ["m4"])
    response = next(r for r in new if r.model_name == "m4")
    Verdict.objects.create(
        judge=judge,
        task=JudgeTask.MMOOC_SCORING,
        prompt_version="v1",
        sample_id=response.sample_id,
        response=response,
        answer_score=1,
        reasoning_score=1.0,
    )
    board = selectors.leaderboard(dataset=dataset)
    assert board.pending_since is not None and "m4" not in [r.model for r in board.models]
    client = Client()
    client.force_login(lead)
    url = reverse("judging:leaderboard", args=[dataset.pk])
    page = client.get(url).content.decode()
    assert "Computed by a worker at" in page and "are not counted yet" in page
    chinese = Client(headers={"accept-language": "zh-hans"})
    chinese.force_login(lead)
    assert "尚未计入" in chinese.get(url).content.decode()
    assert leaderboard_store.leaderboard_sweep().requeued == []
    LeaderboardChange.objects.filter(dataset=dataset).update(
        since=timezone.now() - timedelta(hours=2)
    )
    assert leaderboard_store.leaderboard_sweep().requeued  # eager: recomputed at once
    board = selectors.leaderboard(dataset=dataset)
    assert board.pending_since is None and "m4" in [r.model for r in board.models]


def test_a_recomputation_whose_worker_died_is_run_again_by_the_sweep() -> None:
    """A run left "running" by a killed worker (its heartbeat stopped) is queued again by the
    sweep and its figures counted: nothing stays stale for good."""
    dataset = _scored(6)
    pk = leaderboard_store.leaderboard_request(dataset_id=dataset.pk, send=False)
    LeaderboardComputation.objects.filter(pk=pk).update(
        status=JobStatus.RUNNING, attempts=1, heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    assert not LeaderboardCell.objects.filter(dataset=dataset).exists()
    board = selectors.leaderboard(dataset=dataset)  # its run is on its way: nothing requested
    assert board.computing and board.models == []
    assert pk in leaderboard_store.leaderboard_sweep().requeued
    row = LeaderboardComputation.objects.get(pk=pk)
    assert row.status == JobStatus.SUCCEEDED and row.computed_at is not None
    assert len(selectors.leaderboard(dataset=dataset).models) == 3


def test_the_first_view_of_a_dataset_requests_its_aggregates() -> None:
    """A dataset whose leaderboard was never computed gets its computation requested by the
    first read (run at once here, where tasks are eager)."""
    dataset = _scored(3)
    assert not LeaderboardComputation.objects.filter(dataset=dataset).exists()
    board = selectors.leaderboard(dataset=dataset)
    assert board.computed_at is not None and len(board.models) == 3


def test_the_page_and_the_api_give_each_cell_its_interval_or_why_it_has_none(
    lead: Any,
) -> None:
    """After a recomputation every cell of two responses or more has its 95 % interval,
    around its mean, by the method the API names; a cell of one response says it has none;
    cells kept before migration 0011 (no sum of squares) show no interval but say that the
    next recomputation gives it, which the migration requests by marking the dataset."""
    dataset = _scored(4)  # 4 responses per model, one per category
    leaderboard_store.leaderboard_compute(dataset=dataset)
    client = Client()
    client.force_login(lead)
    page_url = reverse("judging:leaderboard", args=[dataset.pk])
    api = client_for(lead)
    api_url = reverse("api_leaderboard", args=[dataset.pk])
    overall = api.get(api_url).json()["models"][0]["ensemble"]["overall"]
    # Scores (a + 0.5)/2 with a in {0, 1}: 0.25 or 0.75, never 0 or 1.
    assert overall["n"] == 4 and overall["ci_method"] == "wilson_effective_n"
    assert overall["ci95_low"] < overall["mean"] < overall["ci95_high"]
    assert overall["no_ci_reason"] == ""
    page = client.get(page_url).content.decode()
    assert f"[{overall['ci95_low']:.3f}, {overall['ci95_high']:.3f}]" in page
    assert "Wilson" in page and "no interval: one response" in page  # the categories
    one = api.get(api_url).json()["models"][0]["ensemble"]["breakdowns"]["ooc"]["category"]
    assert {cell["no_ci_reason"] for cell in one.values()} <= {"n_below_2"}

    LeaderboardCell.objects.filter(dataset=dataset).update(score_squares=None, score_binary_n=None)
    stale = api.get(api_url).json()["models"][0]["ensemble"]["overall"]
    assert stale["ci95_low"] is None and stale["no_ci_reason"] == "not_recomputed"
    page = client.get(page_url).content.decode()
    assert "interval at the next recomputation" in page and "[0." not in page
    migration = importlib.import_module("judging.migrations.0011_leaderboard_score_interval")
    with connection.cursor() as cursor:
        cursor.execute(migration.MARK)
    assert LeaderboardChange.objects.filter(dataset=dataset).exists()
    leaderboard_store.leaderboard_compute(dataset=dataset)
    again = api.get(api_url).json()["models"][0]["ensemble"]["overall"]
    assert again["ci95_low"] == pytest.approx(overall["ci95_low"])
