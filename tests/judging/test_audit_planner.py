"""The audit planner's preview (judging.audit.planner): margins from the frame's stored strata,
warnings on the design, a GET with no CSRF token in its URL, strata that follow new verdicts."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from annotation.models import Sample
from judging import services as judging_services
from judging.audit import computations, planner, selectors
from judging.models import AuditSet, Verdict
from judging.stats.sampling import allocate
from tests.judging import audit_factories as af
from tests.judging.factories import bulk_responses, rule_judge
from tests.support.html import element, elements
from tests.support.http import browser

pytestmark = pytest.mark.django_db


def test_no_warning_for_a_design_the_frame_can_meet() -> None:
    sizes = {"a": 50, "b": 40}
    assert planner.design_warnings(sizes, allocate(sizes, 20, "sqrt", 5), n=20, floor=5) == []


def test_n_beyond_the_population_is_warned() -> None:
    """Asking for more items than the frame holds says that every item would be drawn."""
    sizes = {"a": 5, "b": 4}
    warnings = planner.design_warnings(sizes, allocate(sizes, 50, "sqrt", 0), n=50, floor=0)
    assert warnings == [
        "N = 50 exceeds the 9 judged items of this task: every item would be drawn."
    ]


def test_strata_below_the_minimum_are_warned_by_name() -> None:
    """A stratum smaller than the minimum is named (it is taken whole)."""
    sizes = {"big": 100, "tiny|x": 2}
    warnings = planner.design_warnings(sizes, allocate(sizes, 30, "sqrt", 5), n=30, floor=5)
    assert warnings == [
        "1 stratum holds fewer items than the minimum of 5 and is taken whole: tiny|x."
    ]


def test_an_n_too_small_for_the_minimum_is_warned_with_the_n_needed() -> None:
    """When N cannot give every stratum its minimum, the warning says how far short the
    poorest stratum falls and which N would do."""
    sizes = {f"s{i}": 50 for i in range(10)}
    allocation = allocate(sizes, 20, "equal", 5)
    warnings = planner.design_warnings(sizes, allocation, n=20, floor=5)
    assert warnings == [
        "N is too small for the minimum: 10 strata get fewer than 5 items (as few as 2). "
        "Raise N to 50 or lower the minimum."
    ]


def test_the_preview_is_a_get_without_the_csrf_token_and_the_draw_a_post(lead: Any) -> None:
    """The preview form is a GET that carries no CSRF token (so none lands in the URL); the
    previewed design is drawn by a separate POST form that carries it."""
    dataset, _ = af.scoring_dataset(n_samples=30)
    computations.frame_strata_compute(dataset=dataset, task="scoring")
    html = browser(lead).get(reverse("judging:audit_new", args=[dataset.pk]), af.PLANNER_DESIGN)
    text = html.content.decode()
    preview = element(text, "form", id="audit-plan", method="get")
    draw = element(text, "form", id="audit-draw", method="post")
    assert not elements(preview, "input", name="csrfmiddlewaretoken")
    assert element(draw, "input", type="hidden", name="csrfmiddlewaretoken")
    assert element(draw, "input", type="hidden", name="size", value="20")


def test_the_preview_reads_the_stored_strata_never_the_frame(
    lead: Any, monkeypatch: pytest.MonkeyPatch, django_assert_max_num_queries: Any
) -> None:
    """Once the strata are counted, the preview reads one stored row (a few queries whatever
    the frame's size) and equals the margins of the frame's own strata."""
    dataset, _ = af.scoring_dataset(n_samples=30)
    sizes = selectors.frame_strata_sizes(selectors.audit_frame(dataset=dataset, task="scoring"))
    computations.frame_strata_compute(dataset=dataset, task="scoring")

    def forbidden(**kwargs: Any) -> Any:
        raise AssertionError("the preview read the frame")

    monkeypatch.setattr(selectors, "audit_frame", forbidden)
    client = browser(lead)
    url = reverse("judging:audit_new", args=[dataset.pk])
    client.get(url, af.PLANNER_DESIGN)  # the session and roles, loaded once
    with django_assert_max_num_queries(8):
        page = client.get(url, af.PLANNER_DESIGN)
    html = page.content.decode()
    from judging.stats.sampling import compare_allocations

    for choice in compare_allocations(sizes, 20, floor=3):
        assert f'data-method="{choice.method}">{choice.overall_margin:.3f}<' in html
    assert "Computed by a worker at" in html


def test_the_preview_warns_on_the_page(lead: Any) -> None:
    dataset, _ = af.scoring_dataset(n_samples=10)
    computations.frame_strata_compute(dataset=dataset, task="scoring")
    page = browser(lead).get(
        reverse("judging:audit_new", args=[dataset.pk]), {**af.PLANNER_DESIGN, "size": 500}
    )
    assert "exceeds the 20 judged items of this task" in page.content.decode()


def test_before_the_first_count_the_preview_queues_it_and_says_so(
    lead: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame never counted is queued for a worker; the page says the count is on its way."""
    dataset, _ = af.scoring_dataset(n_samples=10)
    sent: list[int] = []
    monkeypatch.setattr(computations, "_send", sent.append)
    html = browser(lead).get(reverse("judging:audit_new", args=[dataset.pk]), af.PLANNER_DESIGN)
    text = html.content.decode()
    assert len(sent) == 1 and 'id="frame-counting"' in text and 'id="computing"' in text
    assert not AuditSet.objects.exists()


def test_the_strata_follow_the_verdicts_of_a_finished_job(
    lead: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """Responses judged by a new job enter the stored strata when the job ends (its end queues
    the recount, which the eager worker runs here)."""
    dataset, _ = af.scoring_dataset(n_samples=10)
    computations.frame_strata_compute(dataset=dataset, task="scoring")
    before = computations.frame_strata_read(dataset=dataset, task="scoring").result
    assert before is not None and before["frame_size"] == 20
    bulk_responses(list(Sample.objects.filter(dataset=dataset).order_by("id")[:5]), ["new-model"])
    with django_capture_on_commit_callbacks(execute=True):
        job = judging_services.judge_job_start(
            dataset=dataset, task="scoring", judges=[rule_judge()]
        )
    after = computations.frame_strata_read(dataset=dataset, task="scoring").result
    assert after is not None and after["frame_size"] == 25, job.status
    assert any(key.endswith("|new-model") for key in after["strata"])


def test_a_recount_is_shown_without_reloading_the_form_away(
    lead: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a recount runs, the preview shows the last counted strata marked "computing…"
    but does not reload by itself (that would undo edits to the form), unlike before the
    first count."""
    dataset, _ = af.scoring_dataset(n_samples=10)
    computations.frame_strata_compute(dataset=dataset, task="scoring")
    monkeypatch.setattr(computations, "_send", lambda pk: None)
    computations._request("frame_strata", dataset_id=dataset.pk, task="scoring")
    html = browser(lead).get(reverse("judging:audit_new", args=[dataset.pk]), af.PLANNER_DESIGN)
    text = html.content.decode()
    assert 'id="computing"' in text and 'id="allocation-table"' in text
    assert "data-computing" not in text and "Preview again" in text


def test_a_recount_of_a_frame_counted_empty_says_a_worker_is_counting(
    lead: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted before the first job's verdicts (empty), recounting after it: the preview says
    the count is on its way and reloads by itself, not "run the judges first"."""
    dataset, _ = af.scoring_dataset(n_samples=10)
    Verdict.objects.filter(sample__dataset=dataset).delete()
    computations.frame_strata_compute(dataset=dataset, task="scoring")
    monkeypatch.setattr(computations, "_send", lambda pk: None)
    computations._request("frame_strata", dataset_id=dataset.pk, task="scoring")
    html = browser(lead).get(reverse("judging:audit_new", args=[dataset.pk]), af.PLANNER_DESIGN)
    text = html.content.decode()
    assert 'id="frame-counting"' in text and "data-computing" in text
    assert "run the judges first" not in text
