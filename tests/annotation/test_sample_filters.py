"""The sample list's filter (annotation/sample_filters.py) and the selectors that apply it:
one definition read from query parameters, written back for paging, applied in one query."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import QueryDict

from annotation import selectors, services
from annotation.models import JobStatus, Sample, SampleStatus, Snapshot, SnapshotEntry
from annotation.sample_filters import FilterError, SampleFilter
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.review.factories import open_queue, submit

pytestmark = pytest.mark.django_db


def matching(dataset: Any, query: str) -> set[str]:
    filter = SampleFilter.from_params(QueryDict(query)).strict()
    found = selectors.samples_matching(dataset=dataset, filter=filter)
    return set(found.values_list("external_id", flat=True))


def test_parameters_round_trip_and_defaults_are_left_out() -> None:
    """A filter read from parameters writes back the same parameters, without the defaults."""
    query = (
        "search=car&status=imported&status=verified&category=VFP&question_format=mcq"
        "&scenario=s&external_id=q1&judges_disagree=false&reviewer=ann&changed=true&ordering=-id"
    )
    filter = SampleFilter.from_params(QueryDict(query))
    assert filter.problems == {}
    assert filter.statuses == ("imported", "verified") and filter.judges_disagree is False
    assert SampleFilter.from_params(QueryDict(query)) == filter
    assert dict(filter.to_params())["ordering"] == "-id"
    assert SampleFilter.from_params(dict(filter.to_params())).search == "car"
    assert SampleFilter.from_params(QueryDict("")).to_params() == []
    assert SampleFilter.from_params({"status": "imported,verified"}).statuses == (
        "imported",
        "verified",
    )


def test_unusable_parameters_are_named_and_left_out() -> None:
    """An unknown status, a bad boolean or sort key is reported per parameter; strict() raises."""
    filter = SampleFilter.from_params(
        QueryDict("status=done&judges_disagree=maybe&ordering=colour&search=" + "x" * 201)
    )
    assert set(filter.problems) == {"status", "judges_disagree", "ordering", "search"}
    assert "done" in filter.problems["status"]
    assert filter.statuses == () and filter.ordering == "id" and filter.search == ""
    with pytest.raises(FilterError):
        filter.strict()


def test_search_and_field_filters_select_the_right_samples() -> None:
    """Search is case-insensitive over external id, question and reference; the other
    filters test their field exactly."""
    dataset = mmooc_dataset()
    mmooc_sample(dataset, external_id="alpha", question="Where is the RED car?")
    mmooc_sample(
        dataset,
        external_id="beta",
        question="Which animal?",
        question_format="vqa",
        options=[],
        reference_answer="A red fox",
        status=SampleStatus.IMPORTED,
    )
    services.sample_flag_judges(
        sample_ids=Sample.objects.filter(external_id="beta").values_list("pk", flat=True),
        disagree=True,
    )
    mmooc_sample(
        dataset,
        external_id="gamma-red",
        question="Is it a cat?",
        category_code="MP",
        question_format="yesno",
        reference_answer="no",
        options=[],
        answerability_group="shifted_ic",
    )
    mmooc_sample(mmooc_dataset(), external_id="red-elsewhere")
    mmooc_sample(  # no judge voted: neither judges filter matches it
        dataset, external_id="delta-red-unjudged", question="A red boat?", scenario="math"
    )
    services.sample_flag_judges(
        sample_ids=Sample.objects.filter(external_id__in=["alpha", "gamma-red"]).values_list(
            "pk", flat=True
        ),
        disagree=False,
    )
    assert matching(dataset, "search=red") == {"alpha", "beta", "gamma-red", "delta-red-unjudged"}
    assert matching(dataset, "search=RED+car") == {"alpha"}
    assert matching(dataset, "status=imported") == {"beta"}
    assert matching(dataset, "category=MP") == {"gamma-red"}
    assert matching(dataset, "question_format=yesno") == {"gamma-red"}
    assert matching(dataset, "question_format=vqa") == {"beta"}
    assert matching(dataset, "external_id=beta") == {"beta"}
    assert matching(dataset, "judges_disagree=true") == {"beta"}
    assert matching(dataset, "judges_disagree=false&search=red") == {"alpha", "gamma-red"}
    assert matching(dataset, "scenario=coarse_perception&search=car") == {"alpha"}


def test_reviewer_filter_asks_the_review_queue() -> None:
    """``reviewer`` selects the samples that user reviewed (through the review port)."""
    reviewer = UserFactory.create(role="annotator")
    dataset = open_queue(mmooc_dataset(), k=2)
    first, _second = mmooc_sample(dataset), mmooc_sample(dataset)
    services.dataset_add_member(dataset=dataset, user=reviewer)
    from review.queue.services import queue_sync

    queue_sync(dataset=dataset)
    submit(reviewer, first)
    assert matching(dataset, f"reviewer={reviewer.username}") == {first.external_id}
    assert matching(dataset, "reviewer=nobody") == set()


def test_changed_since_the_last_snapshot() -> None:
    """``changed`` selects samples whose content differs from the last finished snapshot or
    that are not in it; with no snapshot, every sample."""
    dataset = mmooc_dataset()
    same, edited, new = mmooc_sample(dataset), mmooc_sample(dataset), mmooc_sample(dataset)
    assert matching(dataset, "changed=true") == {
        same.external_id,
        edited.external_id,
        new.external_id,
    }
    snapshot = Snapshot.objects.create(
        dataset=dataset, name="v1", format="jsonl", status=JobStatus.SUCCEEDED
    )
    SnapshotEntry.objects.bulk_create(
        SnapshotEntry(
            snapshot=snapshot, sample=s, external_id=s.external_id, content_hash=s.content_hash
        )
        for s in (same, edited)
    )
    Snapshot.objects.create(dataset=dataset, name="failed", format="jsonl", status=JobStatus.FAILED)
    services.sample_update(sample=edited, changes={"reference_answer": "B"}, by=None, source="edit")
    assert matching(dataset, "changed=true") == {edited.external_id, new.external_id}


def test_sorting_and_the_selection_of_a_bulk_action() -> None:
    """Sorting follows the filter (ties by id); a selection narrows the filter to chosen ids."""
    dataset = mmooc_dataset()
    a = mmooc_sample(dataset, external_id="b-1", priority=1)
    b = mmooc_sample(dataset, external_id="a-2", priority=3)
    c = mmooc_sample(dataset, external_id="c-3", priority=2)
    ordered = selectors.sample_list_filtered(
        dataset=dataset, filter=SampleFilter.from_params({"ordering": "-priority"})
    )
    assert [s.pk for s in ordered] == [b.pk, c.pk, a.pk]
    by_name = selectors.sample_list_filtered(
        dataset=dataset, filter=SampleFilter.from_params({"ordering": "external_id"})
    )
    assert [s.pk for s in by_name] == [b.pk, a.pk, c.pk]
    chosen = selectors.samples_selected(
        dataset=dataset, filter=SampleFilter(search="-"), ids=[a.pk, c.pk]
    )
    assert set(chosen) == {a, c}
    assert set(selectors.samples_selected(dataset=dataset, filter=SampleFilter())) == set(
        Sample.objects.filter(dataset=dataset)
    )
