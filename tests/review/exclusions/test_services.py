"""Excluding a reviewer from consensus settles again exactly the samples they reviewed, sends
back to review those left with fewer than k counted reviews, and taking it back restores them."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Dataset, Sample, SampleRevision, SampleStatus
from review import services
from review.exclusions import services as exclusions
from review.models import Outcome, ReviewerExclusion, Slot
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset, submit

pytestmark = [pytest.mark.django_db]


def _samples(dataset: Dataset) -> list[Sample]:
    return list(Sample.objects.filter(dataset=dataset).select_related("dataset").order_by("pk"))


def _state(sample: Sample) -> tuple[str, int, int]:
    """Status, revisions and open slots of a sample."""
    fresh = Sample.objects.get(pk=sample.pk)
    open_slots = Slot.objects.filter(sample=sample, done=False, gold=False).count()
    return fresh.status, SampleRevision.objects.filter(sample=sample).count(), open_slots


def _set_k(dataset: Dataset, k: int) -> None:
    queue_services.review_settings_update(
        dataset=dataset, overlap=k, blind=True, show_judge_hints=False, lease_seconds=900
    )


@pytest.fixture
def team() -> dict[str, Any]:
    """k = 2; a and b verified s1 and s2, b and c verified s3, s4 waits for review."""
    dataset = review_dataset(4)
    a, b, c, lead = (UserFactory.create() for _ in range(4))
    s1, s2, s3, s4 = _samples(dataset)
    for sample, pair in ((s1, (a, b)), (s2, (a, b)), (s3, (b, c))):
        for reviewer in pair:
            submit(reviewer, sample)
    return {"dataset": dataset, "a": a, "b": b, "c": c, "lead": lead, "s": (s1, s2, s3, s4)}


def test_excluding_returns_exactly_the_samples_left_under_k(team: dict[str, Any]) -> None:
    """Excluding a: s1 and s2 keep one counted review, so they go back in review with one open
    slot each and no outcome; s3 and s4 are not touched (same status, history and slots)."""
    s1, s2, s3, s4 = team["s"]
    before = {s.pk: _state(s) for s in (s3, s4)}
    outcome_s3 = Outcome.objects.get(sample=s3).decided_at
    result = exclusions.reviewer_exclude(
        dataset=team["dataset"], reviewer=team["a"], by=team["lead"], reason="low gold accuracy"
    )
    assert (result.affected, result.resettled, result.returned, result.left) == (2, 0, 2, 0)
    for sample in (s1, s2):
        status, _revisions, open_slots = _state(sample)
        assert (status, open_slots) == (SampleStatus.IN_REVIEW, 1)
        assert not Outcome.objects.filter(sample=sample).exists()
    assert {s.pk: _state(s) for s in (s3, s4)} == before
    assert Outcome.objects.get(sample=s3).decided_at == outcome_s3


def test_a_returned_sample_settles_on_the_counted_reviews(team: dict[str, Any]) -> None:
    """After the exclusion, a new reviewer's accept settles s1 with b's: two counted reviews."""
    s1 = team["s"][0]
    exclusions.reviewer_exclude(dataset=team["dataset"], reviewer=team["a"], by=team["lead"])
    result = submit(UserFactory.create(), s1)
    assert result.settled_status == "verified"
    assert Sample.objects.get(pk=s1.pk).status == SampleStatus.VERIFIED


def test_taking_the_exclusion_back_restores_the_samples(team: dict[str, Any]) -> None:
    """Undo settles s1 and s2 again on a's and b's reviews and closes the slot opened for them."""
    s1, s2, _s3, _s4 = team["s"]
    exclusions.reviewer_exclude(dataset=team["dataset"], reviewer=team["a"], by=team["lead"])
    result = exclusions.reviewer_include(
        dataset=team["dataset"], reviewer=team["a"], by=team["lead"]
    )
    assert (result.affected, result.resettled, result.returned) == (2, 2, 0)
    for sample in (s1, s2):
        status, _revisions, open_slots = _state(sample)
        assert (status, open_slots) == (SampleStatus.VERIFIED, 0)
        assert Outcome.objects.get(sample=sample).status == "verified"
    assert not ReviewerExclusion.objects.exists()


def test_a_sample_keeping_k_counted_reviews_is_settled_again() -> None:
    """k was 3 and a rejected what b and c accepted (adjudication); with k now 2, excluding a
    settles the sample again on b and c: verified."""
    dataset = review_dataset(1, k=3)
    (sample,) = _samples(dataset)
    a, b, c, lead = (UserFactory.create() for _ in range(4))
    submit(a, sample, "reject")
    submit(b, sample)
    assert submit(c, sample).settled_status == "needs_adjudication"
    _set_k(dataset, 2)
    result = exclusions.reviewer_exclude(dataset=dataset, reviewer=a, by=lead)
    assert (result.resettled, result.returned) == (1, 0)
    assert Sample.objects.get(pk=sample.pk).status == SampleStatus.VERIFIED
    assert Outcome.objects.get(sample=sample).status == "verified"


def test_excluding_both_reviewers_leaves_k_slots_to_fill() -> None:
    """No counted review left: the sample waits in review for k new reviews, in the same
    round (the second exclusion finds it in review already)."""
    dataset = review_dataset(1)
    (sample,) = _samples(dataset)
    a, b, lead = (UserFactory.create() for _ in range(3))
    submit(a, sample)
    submit(b, sample)
    exclusions.reviewer_exclude(dataset=dataset, reviewer=a, by=lead)
    exclusions.reviewer_exclude(dataset=dataset, reviewer=b, by=lead)
    status, _revisions, open_slots = _state(sample)
    assert (status, open_slots) == (SampleStatus.IN_REVIEW, 2)
    assert set(Slot.objects.filter(sample=sample).values_list("round", flat=True)) == {0}


def test_an_excluded_reviewers_new_review_does_not_count() -> None:
    """Reviews submitted while excluded fill a slot but not k: the sample gets another slot."""
    dataset = review_dataset(1)
    (sample,) = _samples(dataset)
    a, b, c, lead = (UserFactory.create() for _ in range(4))
    exclusions.reviewer_exclude(dataset=dataset, reviewer=a, by=lead)
    submit(b, sample)
    assert submit(a, sample).settled_status is None
    assert _state(sample)[::2] == (SampleStatus.IN_REVIEW, 1)
    assert submit(c, sample).settled_status == "verified"


def test_a_sample_in_review_gets_a_slot_for_the_excluded_review() -> None:
    """a reviewed a sample still waiting for b: excluding a opens one more slot for it."""
    dataset = review_dataset(1)
    (sample,) = _samples(dataset)
    a, lead = UserFactory.create(), UserFactory.create()
    submit(a, sample)
    result = exclusions.reviewer_exclude(dataset=dataset, reviewer=a, by=lead)
    assert (result.affected, result.left) == (1, 1)
    assert _state(sample)[::2] == (SampleStatus.IN_REVIEW, 2)


def test_adjudicated_samples_are_left_alone() -> None:
    """A lead's adjudication is final: excluding a reviewer does not reopen the sample."""
    dataset = review_dataset(1)
    (sample,) = _samples(dataset)
    a, b, lead = UserFactory.create(), UserFactory.create(), UserFactory.create()
    submit(a, sample, "reject")
    submit(b, sample)
    services.sample_adjudicate(
        sample=Sample.objects.get(pk=sample.pk), by=lead, decision="accept", note="fine"
    )
    result = exclusions.reviewer_exclude(dataset=dataset, reviewer=a, by=lead)
    assert (result.affected, result.left) == (1, 1)
    assert _state(sample)[::2] == (SampleStatus.VERIFIED, 0)


def test_bad_requests_get_clear_errors(team: dict[str, Any]) -> None:
    """A second exclusion, undoing one that does not exist and an over-long reason are refused
    with a message, and write nothing."""
    args = {"dataset": team["dataset"], "reviewer": team["a"], "by": team["lead"]}
    with pytest.raises(ValidationError, match="not excluded"):
        exclusions.reviewer_include(**args)
    with pytest.raises(ValidationError, match="1,000 characters"):
        exclusions.reviewer_exclude(**args, reason="x" * 1001)
    assert not ReviewerExclusion.objects.exists()
    exclusions.reviewer_exclude(**args)
    with pytest.raises(ValidationError, match="already excluded"):
        exclusions.reviewer_exclude(**args)
    assert ReviewerExclusion.objects.count() == 1


def _exclusion_queries(n: int) -> int:
    dataset = review_dataset(n)
    a, b, lead = UserFactory.create(), UserFactory.create(), UserFactory.create()
    for sample in _samples(dataset):
        submit(a, sample)
        submit(b, sample)
    with CaptureQueriesContext(connection) as queries:
        result = exclusions.reviewer_exclude(dataset=dataset, reviewer=a, by=lead)
    assert result.returned == n
    return len(queries)


def test_returning_samples_takes_a_fixed_number_of_queries() -> None:
    """Sending 2 or 8 samples back to review costs the same number of queries."""
    assert _exclusion_queries(2) == _exclusion_queries(8)


def test_each_batch_adds_the_same_few_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    """In batches of 2 samples, each further batch costs the same handful of queries."""
    monkeypatch.setattr(exclusions, "BATCH", 2)
    two, four, six = (_exclusion_queries(n) for n in (2, 4, 6))
    assert four - two == six - four <= 6


def test_uncertain_samples_go_to_adjudication_in_bulk(team: dict[str, Any]) -> None:
    """Verified and in-review samples move to adjudication with an outcome saying so; a
    sample not in the workflow (s4 pending with no review is in it; an imported one is not)
    and one adjudicated already are left alone."""
    s1, s2, s3, _s4 = team["s"]
    sent = exclusions.samples_send_to_adjudication(
        dataset=team["dataset"], sample_ids=[s1.pk, s2.pk], by=team["lead"], reason="uncertain"
    )
    assert sent == 2
    for sample in (s1, s2):
        assert Sample.objects.get(pk=sample.pk).status == SampleStatus.NEEDS_ADJUDICATION
        outcome = Outcome.objects.get(sample=sample)
        assert (outcome.status, outcome.agreement) == ("needs_adjudication", False)
    assert Sample.objects.get(pk=s3.pk).status == SampleStatus.VERIFIED
    again = exclusions.samples_send_to_adjudication(
        dataset=team["dataset"], sample_ids=[s1.pk], by=team["lead"], reason="uncertain"
    )
    assert again == 0
