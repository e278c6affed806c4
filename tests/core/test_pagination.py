"""Pages whose count is exact within a budget, otherwise the planner's estimate
(core/pagination.py: CountWithinBudget)."""

from __future__ import annotations

import pytest
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from annotation.models import Sample
from core.pagination import CountWithinBudget
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
