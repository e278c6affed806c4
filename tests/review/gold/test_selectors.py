"""Reads of gold items: each item's agreement among the reviewers served it, and which samples
are gold for the sample list's column and filter."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db import connection

from annotation import extensions
from annotation import selectors as annotation_selectors
from annotation.models import Dataset, Sample, SampleStatus
from annotation.sample_filters import SampleFilter
from review import selectors, services
from review.models import GoldAnswer
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory, mmooc_sample
from tests.review.gold.test_services import AlwaysGold, _dataset, _fresh

pytestmark = pytest.mark.django_db


def _serve(dataset: Dataset, reviewer: Any) -> Sample:
    """Serve the reviewer the first gold item left for them."""
    lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    assert lease is not None and lease.gold
    return _fresh(Sample(pk=lease.sample_id))


def _answer(reviewer: Any, sample: Sample, category: str) -> GoldAnswer:
    result = services.review_submit(
        reviewer=reviewer,
        sample=sample,
        client_uuid=uuid.uuid4(),
        decision="accept",
        values={"category_code": category},
    )
    assert isinstance(result.review, GoldAnswer)
    return result.review


def test_each_gold_item_counts_the_reviewers_served_it_and_those_who_agreed() -> None:
    """Served counts every reviewer served the item (answered, skipped or still holding it);
    agreed counts the answers that matched it, by the same rule as a reviewer's accuracy."""
    dataset = _dataset(2, 3, rate=0.5)
    first, second, third = UserFactory.create_batch(3, member_of=dataset)
    a = _serve(dataset, first)
    _answer(first, a, "VFP")  # agrees
    b = _serve(dataset, first)
    _answer(first, b, "MA")  # disagrees
    _answer(second, _serve(dataset, second), "MA")  # disagrees on a
    skipped = _serve(dataset, second)
    queue_services.slot_skip(sample=skipped, reviewer=second, reason="unsure")
    assert _serve(dataset, third) == a  # holds it, not answered yet
    rows = list(selectors.gold_items_with_accuracy(dataset=dataset))
    counts = [(r.sample_id, r.served, r.answered, r.agreed) for r in rows]
    c = rows[2].sample_id
    assert counts == [(a.pk, 3, 2, 1), (b.pk, 2, 1, 0), (c, 0, 0, 0)]
    assert skipped == b
    # The items' agreement adds up to each reviewer's own gold counts.
    per_reviewer = selectors.reviewer_gold_counts(dataset=dataset)
    assert sum(correct for correct, _total in per_reviewer.values()) == sum(r.agreed for r in rows)
    assert sum(total for _correct, total in per_reviewer.values()) == sum(r.answered for r in rows)


def test_the_gold_items_cost_one_query_however_many_were_answered(
    django_assert_num_queries: Any,
) -> None:
    dataset = _dataset(2, 4, rate=0.5)
    for reviewer in UserFactory.create_batch(3, member_of=dataset):
        for _ in range(4):
            _answer(reviewer, _serve(dataset, reviewer), "VFP")
    with django_assert_num_queries(1):
        rows = list(selectors.gold_items_with_accuracy(dataset=dataset))
        assert [r.sample.external_id for r in rows]  # the samples come along
    assert [(r.served, r.agreed) for r in rows] == [(3, 3)] * 4


def test_the_sample_filter_selects_gold_items_or_the_others() -> None:
    dataset = _dataset(2, 2, rate=0.5)
    plain = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    gold_ids = set(selectors.gold_items(dataset=dataset).values_list("sample_id", flat=True))
    others = set(Sample.objects.filter(dataset=dataset).values_list("pk", flat=True)) - gold_ids
    assert plain.pk in others and len(gold_ids) == 2

    def matching(**params: str) -> set[int]:
        filter = SampleFilter.from_params(params).strict()
        return set(
            annotation_selectors.samples_matching(dataset=dataset, filter=filter).values_list(
                "pk", flat=True
            )
        )

    assert matching(gold="yes") == gold_ids
    assert matching(gold="no") == others
    assert matching(gold="true", status="verified") == gold_ids
    listed = annotation_selectors.sample_list_filtered(
        dataset=dataset, filter=SampleFilter(), with_gold=True
    )
    assert {s.pk for s in listed if s.is_gold} == gold_ids  # type: ignore[attr-defined]


def test_without_gold_items_plugged_in_no_sample_is_gold() -> None:
    """Annotation alone (nothing registered the gold port): "gold" matches nothing, "not
    gold" everything, and the column says no."""
    dataset = _dataset(1, 1, rate=0.5)
    everything = Sample.objects.filter(dataset=dataset).count()
    extensions.gold_samples_register(None)
    try:
        yes = SampleFilter.from_params({"gold": "true"})
        no = SampleFilter.from_params({"gold": "false"})
        assert not annotation_selectors.samples_matching(dataset=dataset, filter=yes).exists()
        assert annotation_selectors.samples_matching(dataset=dataset, filter=no).count() == (
            everything
        )
        listed = annotation_selectors.sample_list_filtered(
            dataset=dataset, filter=SampleFilter(), with_gold=True
        )
        assert not any(s.is_gold for s in listed)  # type: ignore[attr-defined]
    finally:
        extensions.gold_samples_register(selectors.gold_is_item)


def test_the_gold_filter_is_one_index_lookup_per_sample() -> None:
    """The plan of "gold: yes" reads the gold items by their sample's unique index (sequential
    scans turned off, as a table of production size would have the planner do)."""
    dataset = _dataset(1, 2, rate=0.5)
    filter = SampleFilter.from_params({"gold": "true"})
    qs = annotation_selectors.samples_matching(dataset=dataset, filter=filter)
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        plan = qs.explain()
        cursor.execute("RESET enable_seqscan")
    assert "Index Only Scan using review_golditem_sample_id_key" in plan, plan
