"""Gold items: marking, their rate among claims, once per reviewer, and never towards k."""

from __future__ import annotations

import math
import random
import uuid
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from annotation import services as annotation_services
from annotation.models import ChangeSource, Dataset, Sample, SampleStatus
from review import selectors, services
from review.gold import services as gold
from review.models import GoldAnswer, GoldItem, Outcome, Review, Skip, Slot
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory, mmooc_sample
from tests.review.factories import blind_settings, open_queue, review_dataset, submit

pytestmark = pytest.mark.django_db


class AlwaysGold(random.Random):
    """A random source whose every draw serves gold, and the first gold item left."""

    def random(self) -> float:
        return 0.0

    def choice(self, seq: Any) -> Any:
        return seq[0]


def _fresh(sample: Sample) -> Sample:
    return Sample.objects.select_related("dataset").get(pk=sample.pk)


def _gold_samples(dataset: Dataset, n: int) -> list[Sample]:
    """n verified samples of the dataset, marked gold with their current values."""
    samples = [
        mmooc_sample(dataset, status=SampleStatus.VERIFIED, category_code="VFP") for _ in range(n)
    ]
    for sample in samples:
        gold.gold_mark(sample=_fresh(sample), by=None)
    return samples


def _dataset(pending: int, gold_items: int, *, rate: float, k: int = 2) -> Dataset:
    dataset = review_dataset(pending, k=k)
    blind_settings(dataset, k=k, gold_rate=rate)
    _gold_samples(dataset, gold_items)
    return dataset


def test_gold_items_are_served_at_the_configured_rate() -> None:
    """Over 2,000 claims with a fixed seed, about rate × 2,000 serve a gold item: within
    three binomial standard deviations of 100 at a 5 % rate."""
    dataset = _dataset(3, 25, rate=0.05)
    reviewers = UserFactory.create_batch(20, member_of=dataset)
    rng = random.Random(17)
    served = 0
    for reviewer in reviewers:
        for _ in range(100):
            lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=rng)
            assert lease is not None and not lease.resumed
            served += lease.gold
            queue_services.slot_release(sample=Sample(pk=lease.sample_id), reviewer=reviewer)
    sigma = math.sqrt(2000 * 0.05 * 0.95)
    assert abs(served - 100) <= 3 * sigma, served
    assert Slot.objects.filter(dataset=dataset, gold=True).count() == served
    assert not Review.objects.filter(dataset=dataset).exists()


def test_a_zero_rate_serves_no_gold() -> None:
    dataset = _dataset(2, 3, rate=0.0)
    reviewer = UserFactory.create(member_of=dataset)
    for _ in range(20):
        lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
        assert lease is not None and not lease.gold
        queue_services.slot_release(sample=Sample(pk=lease.sample_id), reviewer=reviewer)


def test_a_reviewer_is_never_served_a_gold_item_twice() -> None:
    """Three reviewers make more claims than there are gold items, at the highest rate:
    each sees each of the 4 gold items once, then the normal claim proceeds."""
    dataset = _dataset(2, 4, rate=0.5)
    gold_ids = set(GoldItem.objects.filter(dataset=dataset).values_list("sample_id", flat=True))
    rng = random.Random(3)
    for reviewer in UserFactory.create_batch(3, member_of=dataset):
        seen: list[int] = []
        for _ in range(40):
            lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=rng)
            assert lease is not None
            if lease.gold:
                seen.append(lease.sample_id)
            else:
                assert lease.sample_id not in gold_ids
            queue_services.slot_release(sample=Sample(pk=lease.sample_id), reviewer=reviewer)
        assert sorted(seen) == sorted(gold_ids)


def test_a_gold_lease_is_renewed_not_replaced() -> None:
    """A reviewer who holds a gold item gets it back on the next claim, as any lease."""
    dataset = _dataset(2, 2, rate=0.5)
    reviewer = UserFactory.create(member_of=dataset)
    first = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    again = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    assert first is not None and first.gold
    assert again is not None and again.resumed and again.gold
    assert again.slot_id == first.slot_id


def test_gold_answers_never_count_towards_k() -> None:
    """A gold answer leaves the gold sample as it was (status, revision, no review, no
    outcome) and the normal samples settle on their own k reviews."""
    dataset = _dataset(1, 1, rate=0.5, k=2)
    normal = Sample.objects.get(dataset=dataset, status=SampleStatus.PENDING_REVIEW)
    gold_sample = GoldItem.objects.get(dataset=dataset).sample
    before = (gold_sample.status, gold_sample.revision)
    first, second = UserFactory.create_batch(2, member_of=dataset)
    for reviewer in (first, second):
        lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
        assert lease is not None and lease.gold and lease.sample_id == gold_sample.pk
        result = services.review_submit(
            reviewer=reviewer,
            sample=_fresh(gold_sample),
            client_uuid=uuid.uuid4(),
            decision="accept",
        )
        assert isinstance(result.review, GoldAnswer) and result.settled_status is None
    queue_services.queue_sync(dataset=dataset)  # the queue leaves gold slots alone
    gold_sample.refresh_from_db()
    assert (gold_sample.status, gold_sample.revision) == before
    assert not Review.objects.filter(sample=gold_sample).exists()
    assert not Outcome.objects.filter(sample=gold_sample).exists()
    assert Slot.objects.filter(sample=gold_sample, gold=True, done=True).count() == 2
    submit(first, normal)
    assert _fresh(normal).status == SampleStatus.IN_REVIEW  # one review of k = 2
    assert submit(second, normal).settled_status == "verified"


def test_a_gold_answer_is_held_against_the_expected_one_field_by_field() -> None:
    dataset = _dataset(1, 1, rate=0.5)
    item = GoldItem.objects.get(dataset=dataset)
    reviewer = UserFactory.create(member_of=dataset)
    queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    sample = _fresh(item.sample)
    result = services.review_submit(
        reviewer=reviewer,
        sample=sample,
        client_uuid=(key := uuid.uuid4()),
        decision="accept",
        values={"category_code": "MA"},
    )
    answer = result.review
    assert isinstance(answer, GoldAnswer)
    assert answer.matches["decision"] is True
    assert answer.matches["category_code"] is False
    assert answer.matches["answerability_group"] is True
    assert answer.matched is False
    assert answer.answer["category_code"] == "MA"
    replay = services.review_submit(
        reviewer=reviewer, sample=sample, client_uuid=key, decision="accept"
    )
    assert replay.review.pk == answer.pk and not replay.created
    with pytest.raises(services.ReviewConflict):
        services.review_submit(
            reviewer=reviewer, sample=sample, client_uuid=uuid.uuid4(), decision="accept"
        )


def test_a_rejection_of_an_item_expected_accepted_matches_no_field() -> None:
    expected = {"decision": "accept", "category_code": "VFP"}
    answer = {"decision": "reject", "reject_reason": "invalid"}
    matches = gold.answer_matches(kind="image_question", expected=expected, answer=answer)
    assert matches == {"decision": False, "category_code": False}


def test_a_skipped_or_released_gold_item_is_not_served_again() -> None:
    dataset = _dataset(2, 1, rate=0.5)
    reviewer = UserFactory.create(member_of=dataset)
    lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    assert lease is not None and lease.gold
    queue_services.slot_skip(
        sample=_fresh(Sample(pk=lease.sample_id)), reviewer=reviewer, reason="?"
    )
    after = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    assert after is not None and not after.gold
    assert not selectors.queue_overview(dataset=dataset, reviewer=reviewer).my_skips
    # Kept for the reviewer's skip rate only, and gone with the gold item.
    skip = Skip.objects.get(reviewer=reviewer, sample_id=lease.sample_id)
    assert skip.gold and skip.reason == "?"
    gold.gold_unmark(sample=_fresh(Sample(pk=lease.sample_id)))
    assert not Skip.objects.filter(sample_id=lease.sample_id).exists()


def test_a_reviewer_who_reviewed_a_sample_is_not_served_it_as_gold() -> None:
    dataset = review_dataset(2, k=1)
    reviewer = UserFactory.create(member_of=dataset)
    reviewed = Sample.objects.filter(dataset=dataset).first()
    assert reviewed is not None
    submit(reviewer, reviewed)  # k = 1: verified by this review
    gold.gold_mark(sample=_fresh(reviewed), by=None)
    assert not gold.gold_candidates(dataset_id=dataset.pk, reviewer=reviewer, besides=None)
    assert gold.gold_candidates(
        dataset_id=dataset.pk, reviewer=UserFactory.create(member_of=dataset), besides=None
    )


def test_the_workbench_shows_a_gold_item_as_a_sample_in_review() -> None:
    reviewer = UserFactory.create(role="annotator")
    dataset = review_dataset(1, k=1, blind=False, members=[reviewer])
    sample = Sample.objects.get(dataset=dataset)
    submit(
        UserFactory.create(member_of=dataset), sample
    )  # verified, with a review others could see
    gold.gold_mark(sample=_fresh(sample), by=None)
    mmooc_sample(dataset)
    queue_services.queue_sync(dataset=dataset)  # a normal sample to claim, swapped for the gold one
    lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    assert lease is not None and lease.gold
    bench = selectors.workbench_get(user=reviewer, sample_id=sample.pk)
    assert bench is not None
    assert bench.sample.status == SampleStatus.IN_REVIEW
    assert bench.other_reviews == [] and bench.submitted is None and bench.lease is not None


def test_only_verified_samples_can_be_gold() -> None:
    dataset = review_dataset(1)
    pending = Sample.objects.get(dataset=dataset)
    with pytest.raises(ValidationError) as refused:
        gold.gold_mark(sample=_fresh(pending), by=None)
    assert refused.value.code == "not_verified"
    assert "Only verified samples can be gold" in refused.value.messages[0]


def test_the_expected_answer_is_checked() -> None:
    dataset = review_dataset(0)
    (sample,) = _gold_samples(dataset, 1)
    sample = _fresh(sample)
    with pytest.raises(ValidationError):
        gold.gold_mark(sample=sample, by=None, expected={"decision": "maybe"})
    with pytest.raises(ValidationError):
        gold.gold_mark(sample=sample, by=None, expected={"category_code": "NOPE"})
    with pytest.raises(ValidationError):
        gold.gold_mark(sample=sample, by=None, expected={"colour": "red"})
    with pytest.raises(ValidationError):
        gold.gold_mark(sample=sample, by=None, expected={"decision": "reject", "scenario": "x"})
    item = gold.gold_mark(
        sample=sample,
        by=None,
        expected={"decision": "reject", "reject_reason": "invalid"},
        explanation=" The image shows no car. ",
        attention_check=True,
    )
    assert item.expected == {"decision": "reject", "reject_reason": "invalid"}
    assert item.explanation == "The image shows no car." and item.attention_check


def test_the_default_expectation_is_the_samples_label_fields() -> None:
    dataset = review_dataset(0)
    (sample,) = _gold_samples(dataset, 1)
    assert GoldItem.objects.get(sample=sample).expected == {
        "decision": "accept",
        "answerability_group": "ooc",
        "category_code": "VFP",
        "scenario": "coarse_perception",
        "reference_answer": "C",
    }


def test_bulk_marking_takes_verified_samples_and_names_the_others() -> None:
    dataset = review_dataset(1)
    verified = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    pending = Sample.objects.get(dataset=dataset, status=SampleStatus.PENDING_REVIEW)
    result = gold.gold_mark_bulk(
        dataset=dataset, sample_ids=[verified.pk, pending.pk, 10**9], by=None
    )
    assert (result.marked, result.refused, result.unknown) == (1, [pending.external_id], [10**9])
    again = gold.gold_mark_bulk(dataset=dataset, sample_ids=[verified.pk], by=None)
    assert again.marked == 0 and GoldItem.objects.filter(dataset=dataset).count() == 1


def test_unmarking_ends_leases_and_answers() -> None:
    dataset = _dataset(1, 1, rate=0.5)
    item = GoldItem.objects.get(dataset=dataset)
    reviewer = UserFactory.create(member_of=dataset)
    queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    assert gold.gold_unmark(sample=item.sample)
    assert not Slot.objects.filter(gold=True).exists()
    assert not gold.gold_unmark(sample=item.sample)
    lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    assert lease is not None and not lease.gold


def test_a_taken_down_gold_sample_is_no_longer_served() -> None:
    dataset = _dataset(1, 1, rate=0.5)
    item = GoldItem.objects.get(dataset=dataset)
    annotation_services.sample_update(
        sample=_fresh(item.sample),
        changes={},
        by=None,
        source=ChangeSource.TAKEDOWN,
        status=SampleStatus.REMOVED,
        reason="x",
    )
    lease = queue_services.slot_claim(
        dataset=dataset, reviewer=UserFactory.create(member_of=dataset), rng=AlwaysGold()
    )
    assert lease is not None and not lease.gold


def test_the_queue_leaves_gold_slots_out_of_its_counts_and_sync() -> None:
    """The queue's counts leave gold leases out, and a sync (a new k) keeps them."""
    dataset = _dataset(1, 1, rate=0.5)
    reviewer = UserFactory.create(member_of=dataset)
    queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    overview = selectors.queue_overview(dataset=dataset, reviewer=reviewer)
    assert overview.leased_slots == 0 and overview.open_slots == 2
    open_queue(dataset, k=2)
    assert Slot.objects.filter(dataset=dataset, gold=True, done=False).count() == 1


def test_bulk_unmarking_removes_the_chosen_items_and_counts_the_others_as_skipped() -> None:
    """Items, answers, gold slots and skips of the chosen gold samples go; chosen samples
    that are no gold item are skipped; gold items not chosen, and other datasets, stay."""
    dataset = _dataset(1, 3, rate=0.5)
    items = list(GoldItem.objects.filter(dataset=dataset).order_by("sample_id"))
    reviewer = UserFactory.create(member_of=dataset)
    lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, rng=AlwaysGold())
    assert lease is not None and lease.sample_id == items[0].sample_id
    services.review_submit(
        reviewer=reviewer,
        sample=_fresh(items[0].sample),
        client_uuid=uuid.uuid4(),
        decision="accept",
    )
    pending = Sample.objects.get(dataset=dataset, status=SampleStatus.PENDING_REVIEW)
    elsewhere = _dataset(0, 1, rate=0.5)
    foreign = GoldItem.objects.get(dataset=elsewhere)
    result = gold.gold_unmark_bulk(
        dataset=dataset,
        sample_ids=[items[0].sample_id, items[1].sample_id, pending.pk, foreign.sample_id],
    )
    assert (result.unmarked, result.skipped) == (2, 1)
    assert list(GoldItem.objects.filter(dataset=dataset)) == [items[2]]
    assert GoldItem.objects.filter(pk=foreign.pk).exists()
    assert not GoldAnswer.objects.exists()
    assert not Slot.objects.filter(gold=True, sample_id=items[0].sample_id).exists()
    again = gold.gold_unmark_bulk(dataset=dataset, sample_ids=[items[0].sample_id])
    assert (again.unmarked, again.skipped) == (0, 1)
