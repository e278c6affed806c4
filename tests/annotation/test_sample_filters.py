"""The sample list's filter (annotation/sample_filters.py) and the selectors that apply it:
one definition (a django-filter filter set) read from query parameters, written back for
paging, applied in one query; the filters on reviews, responses, verdicts and dates, and who
may use them."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

import pytest
from django.db import connection
from django.http import QueryDict
from django.urls import reverse
from django.utils import timezone

from annotation import selectors, services
from annotation.models import JobStatus, Sample, SampleStatus, Snapshot, SnapshotEntry
from annotation.sample_filters import FilterError, SampleFilter, SampleFilterSet
from judging.models import ModelResponse, Verdict
from review.queue.services import slot_skip
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.judging.factories import JudgeFactory
from tests.review.factories import open_queue, submit
from tests.support.http import browser

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


# --- the filters on other apps' work, dates, and who may use them ---------------------------


def reviewed_dataset(*, blind: bool = True) -> tuple[Any, Any, Any]:
    """A queue (k = 2) of five samples: one accepted as it stands, one accepted with a
    correction, one rejected, one skipped, one untouched; two annotators."""
    first, second = UserFactory.create(role="annotator"), UserFactory.create(role="annotator")
    dataset = mmooc_dataset()
    samples = {
        name: mmooc_sample(dataset, external_id=name)
        for name in ("accepted", "corrected", "rejected", "skipped", "untouched")
    }
    open_queue(dataset, k=2, blind=blind, members=[first, second])
    submit(first, samples["accepted"])
    submit(first, samples["corrected"], values={"reference_answer": "A"})
    submit(second, samples["rejected"], "reject")
    slot_skip(sample=samples["skipped"], reviewer=second, reason="unclear")
    return dataset, first, second


def test_the_decision_filter_reads_the_samples_reviews() -> None:
    """``decision`` selects samples with a review that accepted them unchanged, corrected or
    rejected them, or a skip; with ``reviewer``, among that reviewer's work only."""
    dataset, first, second = reviewed_dataset()
    assert matching(dataset, "decision=accept") == {"accepted"}
    assert matching(dataset, "decision=correct") == {"corrected"}
    assert matching(dataset, "decision=reject") == {"rejected"}
    assert matching(dataset, "decision=skip") == {"skipped"}
    assert matching(dataset, f"decision=reject&reviewer={second.username}") == {"rejected"}
    assert matching(dataset, f"decision=reject&reviewer={first.username}") == set()
    assert matching(dataset, f"reviewer={first.username}") == {"accepted", "corrected"}


def judged_dataset() -> tuple[Any, dict[str, Sample]]:
    """Samples with models' responses and the judges' verdicts: answerability labels on two,
    scores of 0.25 and 1.0 on one response, 0.75 on another."""
    dataset = mmooc_dataset()
    samples = {name: mmooc_sample(dataset, external_id=name) for name in ("a", "b", "c", "d")}
    judge = JudgeFactory.create()
    responses = {
        (name, model): ModelResponse.objects.create(
            dataset=dataset, sample=samples[name], model_name=model, response="D"
        )
        for name, model in (("a", "m1"), ("a", "m2"), ("b", "m1"), ("c", "m2"))
    }
    for name, label in (("a", "unanswerable"), ("d", "answerable")):
        Verdict.objects.create(
            judge=judge,
            task="answerability",
            prompt_version="v1",
            sample=samples[name],
            label=label,
        )
    for repeat, ((name, model), answer, reasoning) in enumerate(
        ((("a", "m1"), 0, 0.5), (("a", "m2"), 1, 1.0), (("b", "m1"), 1, 0.5))
    ):
        Verdict.objects.create(
            judge=judge,
            task="mmooc_scoring",
            prompt_version="v1",
            repeat=repeat,
            sample=samples[name],
            response=responses[(name, model)],
            answer_score=answer,
            reasoning_score=reasoning,
        )
    return dataset, samples


def test_the_response_and_verdict_filters_read_the_judges_work() -> None:
    """Responses (any model, or one), a verdict's label, and a score range that one verdict
    must meet with both bounds (a has 0.25 and 1.0, b has 0.75)."""
    dataset, _samples = judged_dataset()
    assert matching(dataset, "has_response=true") == {"a", "b", "c"}
    assert matching(dataset, "has_response=false") == {"d"}
    assert matching(dataset, "response_model=m2") == {"a", "c"}
    assert matching(dataset, "response_model=m3") == set()
    assert matching(dataset, "verdict=unanswerable") == {"a"}
    assert matching(dataset, "verdict=answerable&has_response=false") == {"d"}
    assert matching(dataset, "score_min=0.5") == {"a", "b"}
    assert matching(dataset, "score_max=0.5") == {"a"}
    assert matching(dataset, "score_min=0.5&score_max=0.75") == {"b"}
    assert matching(dataset, "score_min=0&score_max=0") == set()
    assert matching(dataset, "score_max=1&response_model=m1") == {"a", "b"}


def test_the_date_filters_take_whole_days_in_the_sites_time_zone() -> None:
    """``created_after``/``created_before`` (and ``updated_…``) include the days they name."""
    dataset = mmooc_dataset()
    old, new = mmooc_sample(dataset, external_id="old"), mmooc_sample(dataset, external_id="new")
    noon = timezone.make_aware(datetime.datetime(2026, 3, 10, 12))
    Sample.objects.filter(pk=old.pk).update(created_at=noon, updated_at=noon)
    assert matching(dataset, "created_before=2026-03-10") == {"old"}
    assert matching(dataset, "created_after=2026-03-10&created_before=2026-03-10") == {"old"}
    assert matching(dataset, "created_after=2026-03-11") == {"new"}
    assert matching(dataset, "updated_before=2026-03-09") == set()
    assert matching(dataset, "updated_after=2026-03-10") == {"old", "new"}
    assert new.pk


def test_new_parameters_round_trip_and_bad_values_name_what_is_allowed() -> None:
    """Every new parameter writes back as read; an unusable value is named with the values or
    the form allowed, and left out."""
    query = (
        "decision=correct&reviewer=ann&has_response=false&response_model=m1&verdict=abstain"
        "&score_min=0&score_max=0.5&created_after=2026-01-02&created_before=2026-02-03"
        "&updated_after=2026-01-01&updated_before=2026-12-31&judges_disagree=false&gold=false"
    )
    filter = SampleFilter.from_params(QueryDict(query)).strict()
    assert filter.score_min == 0.0 and filter.created_after == datetime.date(2026, 1, 2)
    assert SampleFilter.from_params(QueryDict(filter.query().urlencode())) == filter
    assert ("score_min", "0.0") in filter.to_params() and ("gold", "false") in filter.to_params()
    bad = SampleFilter.from_params(
        QueryDict(
            "decision=maybe&verdict=yes&score_min=2&score_max=abc&created_after=3/12/2026"
            "&has_response=perhaps&reviewer=" + "r" * 201
        )
    )
    assert bad.problems == {
        "decision": "Unknown decision “maybe” (known: accept, correct, reject, skip).",
        "verdict": "Unknown verdict “yes” (known: answerable, unanswerable, abstain, safe, "
        "unsafe).",
        "score_min": "Use a number from 0 to 1.",
        "score_max": "Use a number from 0 to 1.",
        "created_after": "Use a date as YYYY-MM-DD.",
        "has_response": "Use true or false.",
        "reviewer": "Keep it under 200 characters.",
    }
    assert bad == SampleFilter()


def test_the_filter_set_declares_every_parameter_of_the_filter() -> None:
    """The filter set (what reads and applies a parameter) and the filter's value (what
    links, hidden fields and bulk jobs keep) name the same parameters."""
    names = {f.name for f in dataclasses.fields(SampleFilter)} - {"problems", "statuses"}
    assert set(SampleFilterSet.base_filters) == names | {"status"}


def test_judge_gold_and_others_work_parameters_are_refused_to_whom_they_would_reveal() -> None:
    """Judges' work and gold items are for leads; in blind review a reviewer may filter on
    their own work only, in open review on everyone's."""
    lead, annotator = UserFactory.create(role="lead"), UserFactory.create(role="annotator")
    blind, first, _second = reviewed_dataset()
    open_review, *_ = reviewed_dataset(blind=False)
    judged = SampleFilter.from_params(QueryDict("verdict=abstain&score_max=1&gold=true"))
    assert judged.refused_for(user=lead, dataset=blind) == {}
    assert set(judged.refused_for(user=annotator, dataset=blind)) == {
        "verdict",
        "score_max",
        "gold",
    }
    theirs = SampleFilter.from_params(QueryDict("reviewer=someone-else&decision=reject"))
    assert set(theirs.refused_for(user=first, dataset=blind)) == {"reviewer", "decision"}
    assert theirs.refused_for(user=first, dataset=open_review) == {}
    own = SampleFilter.from_params(QueryDict(f"reviewer={first.username}&decision=accept"))
    assert own.refused_for(user=first, dataset=blind) == {}
    assert own.without({"decision"}) == SampleFilter(reviewer=first.username)


def test_the_page_drops_what_the_reader_may_not_filter_on(annotator: Any, lead: Any) -> None:
    """In blind review an annotator's page ignores another reviewer's name and shows no
    decision, judge or gold inputs; a lead's page shows them all."""
    dataset, first, _second = reviewed_dataset()
    services.dataset_add_member(dataset=dataset, user=annotator)
    url = reverse("annotation:sample_list", args=[dataset.pk])
    page = browser(annotator).get(url, {"reviewer": first.username}).content.decode()
    assert "5 samples match." in page and 'name="decision"' not in page
    assert 'name="verdict"' not in page and 'name="gold"' not in page
    own = browser(first).get(url, {"reviewer": first.username}).content.decode()
    assert "2 samples match." in own
    led = browser(lead).get(url, {"reviewer": first.username, "decision": "correct"})
    assert "1 sample matches." in led.content.decode()
    assert 'name="verdict"' in led.content.decode() and 'name="score_min"' in led.content.decode()


def test_the_page_with_every_new_filter_costs_a_fixed_number_of_queries(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """Decision, reviewer, responses, verdicts, scores and dates add no query: each is a
    condition of the count's and the page's statements."""
    dataset, first, _second = reviewed_dataset(blind=False)
    query = {
        "decision": "accept",
        "reviewer": first.username,
        "has_response": "false",
        "verdict": "",
        "score_max": "1",
        "created_after": "2020-01-01",
        "updated_before": "2100-01-01",
        "gold": "false",
    }
    client = browser(lead)
    url = reverse("annotation:sample_list", args=[dataset.pk])
    # session, user, roles, dataset, saved views, kept layout, the planner's estimate, the count
    # within its budget (savepoint, timeout, count, rollback, release), page, media, filter
    # choices (one statement, terms)
    with django_assert_num_queries(16):
        page = client.get(url, {**query, "score_max": ""}).content.decode()
    assert "1 sample matches." in page
    with django_assert_num_queries(15):  # no match: the page reads nothing, no media to load
        assert "0 samples match." in client.get(url, query).content.decode()


def test_the_search_is_served_by_the_trigram_index_on_each_column() -> None:
    """The search's four conditions are each a scan of the trigram index (annotation 0027):
    its expressions are the ones the lookup writes. Sequential and plain index scans are
    turned off, since a test's few rows are cheaper to read whole; a condition the index did
    not serve would leave the planner nothing but a sequential scan."""
    dataset = mmooc_dataset()
    mmooc_sample(dataset, question="Where is the red car?")
    filterset = SampleFilterSet(
        data={"search": "red car"}, queryset=Sample.objects.order_by(), dataset=dataset
    )
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        plan = filterset.qs.explain()
    assert plan.count("Bitmap Index Scan on sample_search_trgm_idx") == 4, plan
    assert "Seq Scan" not in plan
    assert set(filterset.qs.values_list("question", flat=True)) == {"Where is the red car?"}


def test_the_search_finds_short_texts_and_texts_with_wildcards() -> None:
    """Texts shorter than a trigram, and ``%`` or ``_`` (taken as themselves), match as a
    plain case-insensitive substring does."""
    dataset = mmooc_dataset()
    mmooc_sample(dataset, external_id="q_1", question="50% off?")
    mmooc_sample(dataset, external_id="qx1", question="Is it ok?")
    assert matching(dataset, "search=OK") == {"qx1"}
    assert matching(dataset, "search=%25") == {"q_1"}
    assert matching(dataset, "search=q_") == {"q_1"}
    assert matching(dataset, "search=I") == {"qx1"}
