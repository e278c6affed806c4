"""Pages whose count is exact within a budget, otherwise the planner's estimate
(core/pagination.py: CountWithinBudget)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import BooleanField, QuerySet
from django.db.models.expressions import RawSQL

from annotation.models import Dataset, Sample
from core.keyset import Cursor, keyset_page
from core.pagination import CountWithinBudget, rows_at
from tests.annotation.factories import mmooc_dataset, mmooc_sample

pytestmark = pytest.mark.django_db


def test_a_count_within_the_budget_is_exact() -> None:
    """A cheap count is the exact number, not labelled an estimate."""
    dataset = mmooc_dataset()
    for _ in range(3):
        mmooc_sample(dataset)
    paginator = CountWithinBudget(Sample.objects.filter(dataset=dataset), 2, budget_ms=5000)
    assert paginator.count == 3 and not paginator.estimated
    assert paginator.num_pages == 2


def test_a_count_over_the_budget_is_the_planners_estimate_and_says_so() -> None:
    """A count the database cannot finish within the budget is cancelled; the paginator gives
    the planner's estimate of the rows, says it is one, and the request goes on."""
    dataset = mmooc_dataset()
    for _ in range(3):
        mmooc_sample(dataset)
    slow = Sample.objects.filter(
        RawSQL("pg_sleep(0.2) IS NOT NULL", [], output_field=BooleanField()), dataset=dataset
    ).order_by("id")
    paginator = CountWithinBudget(slow, 2, budget_ms=20)
    assert paginator.count >= 0 and paginator.estimated
    assert Sample.objects.filter(dataset=dataset).count() == 3  # the transaction is usable


def _slow_and_underestimated(dataset: Dataset) -> QuerySet[Sample]:
    """Three samples behind a filter the planner guesses keeps about one of them, which takes
    longer to count than the budget."""
    return Sample.objects.filter(
        RawSQL("pg_sleep(0.05) IS NOT NULL", [], output_field=BooleanField()), dataset=dataset
    ).order_by("id")


def test_an_estimate_below_the_rows_never_cuts_a_page_short() -> None:
    """Regression (CI, 2026-12-03: a lead's sample list on a loaded machine showed one row of
    three): with a count over budget and the planner's estimate below the real rows, each page
    still holds every row up to its size, page 2 is served rather than refused, and the count
    is corrected by what the pages read."""
    dataset = mmooc_dataset()
    ids = [mmooc_sample(dataset).pk for _ in range(3)]
    paginator = CountWithinBudget(_slow_and_underestimated(dataset), 2, budget_ms=20)
    first = paginator.get_page(1)
    assert [sample.pk for sample in first.object_list] == ids[:2]
    assert first.has_next() and paginator.estimated and paginator.count >= 3
    paginator = CountWithinBudget(_slow_and_underestimated(dataset), 2, budget_ms=20)
    second = paginator.get_page(2)
    assert [sample.pk for sample in second.object_list] == ids[2:]
    assert not second.has_next() and second.has_previous()
    assert (paginator.count, paginator.estimated) == (3, False)  # it ended here


def test_a_page_past_an_estimate_that_was_too_high_is_empty_not_an_error() -> None:
    """A page number past the rows there are, under an estimated count, is an empty page whose
    previous page is offered; a page past the count's end under an exact count is the last."""
    dataset = mmooc_dataset()
    for _ in range(3):
        mmooc_sample(dataset)
    paginator = CountWithinBudget(_slow_and_underestimated(dataset), 2, budget_ms=20)
    paginator.count  # noqa: B018 - decides the count (estimated) before the page is asked
    paginator.__dict__["count"] = 100  # as if the planner had guessed high
    far = paginator.get_page(7)
    assert list(far.object_list) == [] and far.has_previous() and not far.has_next()
    assert paginator.count <= 12
    exact = CountWithinBudget(Sample.objects.filter(dataset=dataset), 2, budget_ms=5000)
    assert exact.get_page(7).number == 2


def test_over_the_threshold_the_planners_estimate_is_the_count_without_counting(
    django_assert_num_queries: Any,
) -> None:
    """With ``exact_below``, the planner is asked first: expecting that many rows or more, its
    estimate is the count (one query, labelled); fewer, the exact count within the budget."""
    dataset = mmooc_dataset()
    for _ in range(3):
        mmooc_sample(dataset)
    samples = Sample.objects.filter(dataset=dataset).order_by("id")
    over = CountWithinBudget(samples, 2, budget_ms=5000, exact_below=1)
    with django_assert_num_queries(1):  # the plan alone
        assert over.count >= 0 and over.estimated
    under = CountWithinBudget(samples, 2, budget_ms=5000, exact_below=10**9)
    assert under.count == 3 and not under.estimated
    empty = CountWithinBudget(samples.none(), 2, budget_ms=5000, exact_below=1)
    with django_assert_num_queries(0):
        assert empty.count == 0 and not empty.estimated


def test_a_count_over_the_budget_asks_the_planner_once() -> None:
    """With ``exact_below`` and a count that runs out of budget, the estimate the planner gave
    first is the count: no second EXPLAIN (it was asked twice before, 3 ms more per page)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    dataset = mmooc_dataset()
    for _ in range(3):
        mmooc_sample(dataset)
    paginator = CountWithinBudget(
        _slow_and_underestimated(dataset), 2, budget_ms=20, exact_below=10**9
    )
    with CaptureQueriesContext(connection) as queries:
        assert paginator.count >= 0 and paginator.estimated
    plans = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("EXPLAIN")]
    assert len(plans) == 1


def test_a_keyset_page_holding_every_row_makes_an_estimated_count_exact(
    django_assert_num_queries: Any,
) -> None:
    """Over the threshold the count is the planner's guess; the first page that ends before
    its size, or the last page with none before it, holds every row: the count is then theirs
    and exact, with no query more. A page with another beside it keeps an estimate of at least
    the rows it and its neighbours hold."""
    dataset = mmooc_dataset()
    ids = [mmooc_sample(dataset).pk for _ in range(3)]
    samples = Sample.objects.filter(dataset=dataset)
    order = ("id",)
    for cursor in (None, Cursor(order, None, before=True)):  # the first page, the last
        paginator = CountWithinBudget(samples, 25, budget_ms=5000, exact_below=1)
        paginator.__dict__["count"] = 40  # as if the planner had guessed high
        paginator.estimated = True
        page = keyset_page(samples, order=order, cursor=cursor, per_page=25)
        with django_assert_num_queries(0):
            paginator.correct_by(page)
        assert [s.pk for s in page.object_list] == ids
        assert (paginator.count, paginator.estimated, paginator.num_pages) == (3, False, 1)
    low = CountWithinBudget(samples, 2, budget_ms=5000, exact_below=1)
    low.__dict__["count"], low.estimated = 1, True  # as if the planner had guessed low
    low.correct_by(keyset_page(samples, order=order, cursor=None, per_page=2))
    assert (low.count, low.estimated) == (3, True)  # two shown, one more after them
    exact = CountWithinBudget(samples, 2, budget_ms=5000)
    assert exact.count == 3 and not exact.estimated
    exact.correct_by(keyset_page(samples, order=order, cursor=None, per_page=2))
    assert (exact.count, exact.estimated) == (3, False)


@pytest.mark.parametrize("bottom,top", [(0, 2), (1, 3), (2, 9), (5, 6), (7, 9)])
def test_rows_at_a_deep_offset_are_the_rows_a_plain_offset_reads(
    bottom: int, top: int, monkeypatch: Any
) -> None:
    """From DEFERRED_FROM on the keys are found first, then their rows: the same rows in the
    same order as the plain slice, ties on the sort column included."""
    dataset = mmooc_dataset()
    for n in range(7):
        mmooc_sample(dataset, priority=n % 2)
    samples = Sample.objects.filter(dataset=dataset).order_by("-priority", "id")
    plain = [s.pk for s in samples[bottom:top]]
    monkeypatch.setattr("core.pagination.DEFERRED_FROM", 0)
    assert [s.pk for s in rows_at(samples, bottom, top)] == plain
