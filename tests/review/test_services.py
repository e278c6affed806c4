"""The queue and the review life of a sample, through the services."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import selectors as annotation_selectors
from annotation import services as annotation_services
from annotation.models import ChangeSource, NoteKey, Sample, SampleRevision, SampleStatus
from review import selectors, services
from review.models import Draft, Outcome, Review, Skip, Slot
from review.queue import services as queue_services
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample
from tests.review.factories import open_queue, review_dataset, submit, trimodal_pair

pytestmark = pytest.mark.django_db


def _fresh(sample: Sample) -> Sample:
    return Sample.objects.select_related("dataset").get(pk=sample.pk)


def test_queue_sync_gives_each_pending_sample_k_slots_once(annotator: Any) -> None:
    """Opening the queue makes k slots per pending sample; running it again adds none."""
    dataset = mmooc_dataset()
    mmooc_sample(dataset)
    mmooc_sample(dataset)
    mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    open_queue(dataset, k=3)
    assert Slot.objects.filter(dataset=dataset).count() == 6
    assert queue_services.queue_sync(dataset=dataset) == 0
    queue_services.review_settings_update(
        dataset=dataset, overlap=2, blind=True, show_judge_hints=False, lease_seconds=60
    )
    assert Slot.objects.filter(dataset=dataset).count() == 4


def test_queue_sync_of_some_samples_touches_those_alone() -> None:
    """``sample_ids`` limits the sync: the samples named get their k slots (and lose them
    when taken down), the others are left as they are; none named costs no statement."""
    dataset = mmooc_dataset()
    kept = mmooc_sample(dataset)
    named = mmooc_sample(dataset)
    other = mmooc_sample(dataset)
    open_queue(dataset, k=2)
    Sample.objects.filter(pk__in=[kept.pk, named.pk]).update(status=SampleStatus.REMOVED)
    Sample.objects.filter(pk=other.pk).update(priority=7)
    fresh = mmooc_sample(dataset)
    assert queue_services.queue_sync(dataset=dataset, sample_ids=[named.pk, fresh.pk]) == 2
    slots = Slot.objects.filter(dataset=dataset, done=False)
    assert sorted(slots.values_list("sample_id", flat=True)) == sorted(
        [kept.pk, kept.pk, other.pk, other.pk, fresh.pk, fresh.pk]
    )
    assert set(slots.filter(sample=other).values_list("priority", flat=True)) == {0}
    with CaptureQueriesContext(connection) as queries:
        assert queue_services.queue_sync(dataset=dataset, sample_ids=[]) == 0
    # Nothing but the savepoint of its transaction.
    assert all("SAVEPOINT" in query["sql"] for query in queries.captured_queries)
    queue_services.queue_sync(dataset=dataset)
    assert not slots.filter(sample=kept).exists()
    assert set(slots.filter(sample=other).values_list("priority", flat=True)) == {7}


def test_claim_serves_judge_disagreements_then_priority_then_order() -> None:
    """The queue order: samples the judges disagreed on, then higher priority, then oldest."""
    dataset = mmooc_dataset()
    plain = mmooc_sample(dataset)
    urgent = mmooc_sample(dataset, priority=5)
    disputed = mmooc_sample(dataset)
    Sample.objects.filter(pk=disputed.pk).update(judges_disagree=True)
    open_queue(dataset, k=1)
    order = []
    for _ in range(3):
        reviewer = UserFactory.create(member_of=dataset)
        lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
        assert lease is not None
        order.append(lease.sample_id)
    assert order == [disputed.pk, urgent.pk, plain.pk]


def test_claim_again_returns_the_same_lease_renewed() -> None:
    """A reviewer holding a lease gets it back instead of a second sample."""
    dataset = review_dataset(2)
    reviewer = UserFactory.create(member_of=dataset)
    first = queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    again = queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    assert first is not None and again is not None
    assert (again.slot_id, again.resumed) == (first.slot_id, True)
    assert Slot.objects.filter(reviewer=reviewer).count() == 1


def test_a_reviewer_never_gets_a_sample_twice_and_no_sample_more_than_k() -> None:
    """With k=2 and three reviewers, each sample is served to two of them, once each."""
    dataset = review_dataset(2, k=2)
    reviewers = [UserFactory.create(member_of=dataset) for _ in range(3)]
    served: dict[int, list[int]] = {}
    for reviewer in reviewers:
        while (lease := queue_services.slot_claim(dataset=dataset, reviewer=reviewer)) is not None:
            served.setdefault(lease.sample_id, []).append(reviewer.pk)
            submit(reviewer, _fresh(Sample.objects.get(pk=lease.sample_id)))
    assert sorted(len(set(who)) for who in served.values()) == [2, 2]
    assert all(len(who) == 2 for who in served.values())
    assert Review.objects.count() == 4


def test_an_expired_lease_returns_to_the_pool() -> None:
    """After its lease expires, a slot goes to another reviewer; its first holder is refused."""
    dataset = review_dataset(1, k=1)
    first, second = UserFactory.create(member_of=dataset), UserFactory.create(member_of=dataset)
    lease = queue_services.slot_claim(dataset=dataset, reviewer=first)
    assert lease is not None
    assert queue_services.slot_claim(dataset=dataset, reviewer=second) is None
    later = timezone.now() + dt.timedelta(seconds=901)
    taken = queue_services.slot_claim(dataset=dataset, reviewer=second, now=later)
    assert taken is not None and taken.slot_id == lease.slot_id
    sample = _fresh(Sample.objects.get(pk=lease.sample_id))
    with pytest.raises(services.ReviewConflict):
        services.review_submit(
            reviewer=first, sample=sample, client_uuid=uuid.uuid4(), decision="accept"
        )


def test_work_after_an_expired_lease_is_kept_while_the_slot_is_free() -> None:
    """A reviewer whose lease expired unclaimed can still submit their review."""
    dataset = review_dataset(1, k=1)
    reviewer = UserFactory.create(member_of=dataset)
    lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    assert lease is not None
    Slot.objects.filter(pk=lease.slot_id).update(
        lease_expires_at=timezone.now() - dt.timedelta(minutes=5)
    )
    result = services.review_submit(
        reviewer=reviewer,
        sample=_fresh(Sample.objects.get(pk=lease.sample_id)),
        client_uuid=uuid.uuid4(),
        decision="accept",
    )
    assert result.created and result.settled_status == "verified"


def test_skip_puts_the_sample_aside_until_asked_for() -> None:
    """A skipped sample is not served by "next", but is by a claim of skipped samples."""
    dataset = review_dataset(1, k=2)
    reviewer = UserFactory.create(member_of=dataset)
    lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    assert lease is not None
    sample = _fresh(Sample.objects.get(pk=lease.sample_id))
    queue_services.slot_skip(sample=sample, reviewer=reviewer, reason="image does not load")
    assert queue_services.slot_claim(dataset=dataset, reviewer=reviewer) is None
    back = queue_services.slot_claim(dataset=dataset, reviewer=reviewer, skipped=True)
    assert back is not None and back.sample_id == sample.pk
    submit(reviewer, sample)
    assert not Skip.objects.filter(reviewer=reviewer).exists()


def test_a_sample_reopened_after_settling_is_reviewed_again_in_a_new_round(lead: Any) -> None:
    """A re-import that changes a verified sample sends it back to review: the next queue sync
    gives it k slots in a new round, the same reviewers may review it again, it settles on the
    new round's reviews alone, and the first round's reviews stay in the history."""
    dataset = review_dataset(1, k=2)
    first, second = UserFactory.create(member_of=dataset), UserFactory.create(member_of=dataset)
    sample = Sample.objects.get(dataset=dataset)
    submit(first, sample)
    assert submit(second, sample).settled_status == "verified"
    annotation_services.sample_update(
        sample=_fresh(sample),
        changes={"explanation": "Reworded by the source."},
        by=lead,
        source=ChangeSource.IMPORT,
        status=SampleStatus.PENDING_REVIEW,
        reason="re-import",
    )
    assert queue_services.queue_sync(dataset=dataset) == 2
    assert queue_services.queue_sync(dataset=dataset) == 0
    assert set(Slot.objects.filter(done=False).values_list("round", flat=True)) == {1}
    for reviewer, decision in ((first, "accept"), (second, "reject")):
        lease = queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
        assert lease is not None and lease.sample_id == sample.pk
        result = submit(reviewer, sample, decision)
    assert result.settled_status == "needs_adjudication"
    assert Outcome.objects.get(sample=sample).status == "needs_adjudication"
    assert sorted(Review.objects.filter(sample=sample).values_list("round", flat=True)) == [
        0,
        0,
        1,
        1,
    ]
    latest = selectors.reviews_by_sample(sample_ids=[sample.pk])[sample.pk]
    assert sorted(r.decision for r in latest) == ["accept", "reject"]
    assert {r.round for r in latest} == {1}
    assert queue_services.slot_claim(dataset=dataset, reviewer=first) is None


def test_a_smaller_k_settles_samples_that_now_have_their_reviews() -> None:
    """Two of three reviews are in when the lead lowers k to 2: the sample settles at once
    (its third, unclaimed slot goes), instead of waiting for a review nobody can give."""
    dataset = review_dataset(1, k=3)
    sample = Sample.objects.get(dataset=dataset)
    for reviewer in (UserFactory.create(member_of=dataset), UserFactory.create(member_of=dataset)):
        assert submit(reviewer, sample).settled_status is None
    assert _fresh(sample).status == SampleStatus.IN_REVIEW
    queue_services.review_settings_update(
        dataset=dataset, overlap=2, blind=True, show_judge_hints=False, lease_seconds=900
    )
    assert _fresh(sample).status == SampleStatus.VERIFIED
    assert Outcome.objects.get(sample=sample).agreement
    assert not Slot.objects.filter(sample=sample, done=False).exists()
    assert (
        queue_services.slot_claim(dataset=dataset, reviewer=UserFactory.create(member_of=dataset))
        is None
    )


def test_skip_needs_a_reason() -> None:
    """An empty skip reason is refused with a readable message."""
    dataset = review_dataset(1)
    sample = _fresh(Sample.objects.filter(dataset=dataset).get())
    with pytest.raises(ValidationError, match="why"):
        queue_services.slot_skip(
            sample=sample, reviewer=UserFactory.create(member_of=dataset), reason="  "
        )


def test_submitting_twice_with_one_uuid_makes_one_review() -> None:
    """A retried submission returns the first review."""
    dataset = review_dataset(1)
    reviewer = UserFactory.create(member_of=dataset)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    key = uuid.uuid4()
    first = submit(reviewer, sample, client_uuid=key)
    again = services.review_submit(
        reviewer=reviewer, sample=sample, client_uuid=key, decision="accept"
    )
    assert first.created and not again.created
    assert again.review.pk == first.review.pk
    assert Review.objects.count() == 1
    with pytest.raises(services.ReviewConflict):
        services.review_submit(
            reviewer=reviewer, sample=sample, client_uuid=uuid.uuid4(), decision="accept"
        )


def test_agreeing_corrections_verify_the_sample_with_history_and_summary() -> None:
    """Two reviewers making the same correction verify the sample with it, source review."""
    dataset = review_dataset(1, k=2)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    a, b = UserFactory.create(member_of=dataset), UserFactory.create(member_of=dataset)
    fix = {"category_code": "MKB", "explanation": "Nothing shows the place."}
    first = submit(a, sample, values=fix, clarity=4, seconds_spent=12)
    assert first.settled_status is None
    assert _fresh(sample).status == SampleStatus.IN_REVIEW
    Draft.objects.create(sample=sample, reviewer=b, payload={"x": 1})
    second = submit(b, _fresh(sample), values=fix)
    assert second.settled_status == "verified"
    sample = _fresh(sample)
    assert (sample.status, sample.category_code) == (SampleStatus.VERIFIED, "MKB")
    revision = SampleRevision.objects.filter(sample=sample).order_by("number").last()
    assert revision is not None and revision.source == ChangeSource.REVIEW
    assert revision.after == {**fix, "status": "verified"}
    summary = annotation_selectors.sample_note(sample_id=sample.pk, key=NoteKey.REVIEW_SUMMARY)
    assert summary["agreement"] is True and summary["adjudicated"] is False
    assert sorted(summary["reviewers"]) == sorted([a.username, b.username])
    assert not Draft.objects.filter(reviewer=b).exists()
    assert not Slot.objects.filter(sample=sample, done=False).exists()


def test_disagreement_goes_to_adjudication_and_the_lead_settles_it(lead: Any) -> None:
    """Different verdicts need adjudication; the lead's values verify it, source adjudication."""
    dataset = review_dataset(1, k=2)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    submit(UserFactory.create(member_of=dataset), sample)
    result = submit(UserFactory.create(member_of=dataset), _fresh(sample), decision="reject")
    assert result.settled_status == "needs_adjudication"
    assert _fresh(sample).status == SampleStatus.NEEDS_ADJUDICATION
    assert annotation_selectors.sample_note(sample_id=sample.pk, key=NoteKey.REVIEW_SUMMARY) is None
    outcome = services.sample_adjudicate(
        sample=_fresh(sample),
        by=lead,
        decision="accept",
        values={"scenario": "math"},
        note="The image does support counting.",
    )
    assert outcome.adjudicated and not outcome.agreement
    sample = _fresh(sample)
    assert (sample.status, sample.scenario) == (SampleStatus.VERIFIED, "math")
    last = SampleRevision.objects.filter(sample=sample).order_by("number").last()
    assert last is not None and last.source == ChangeSource.ADJUDICATION
    assert last.reason == "The image does support counting."
    summary = annotation_selectors.sample_note(sample_id=sample.pk, key=NoteKey.REVIEW_SUMMARY)
    assert summary["adjudicated"] is True


def test_adjudication_needs_a_note_and_valid_values(lead: Any) -> None:
    """Without a note, or with a category outside the taxonomy, nothing changes."""
    dataset = review_dataset(1)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    with pytest.raises(ValidationError):
        services.sample_adjudicate(sample=sample, by=lead, decision="accept", note=" ")
    with pytest.raises(ValidationError, match="Unknown category"):
        services.sample_adjudicate(
            sample=sample, by=lead, decision="accept", note="n", values={"category_code": "ZZ"}
        )
    assert _fresh(sample).status == SampleStatus.PENDING_REVIEW


def test_all_rejecting_rejects_the_sample() -> None:
    """A rejection agreed by every reviewer rejects the sample."""
    dataset = review_dataset(1, k=2)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    submit(
        UserFactory.create(member_of=dataset), sample, decision="reject", reject_reason="duplicate"
    )
    submit(
        UserFactory.create(member_of=dataset),
        _fresh(sample),
        decision="reject",
        reject_reason="licence",
    )
    assert _fresh(sample).status == SampleStatus.REJECTED
    assert Outcome.objects.get(sample=sample).agreement is True


def test_bad_review_input_is_refused_readably() -> None:
    """Unknown fields, taxonomy breaks, missing reject reasons and bad ratings are refused."""
    dataset = review_dataset(1)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    reviewer = UserFactory.create(member_of=dataset)
    queue_services.slot_claim(dataset=dataset, reviewer=reviewer)
    bad: list[dict[str, Any]] = [
        {"decision": "accept", "values": {"question": "changed"}},
        {"decision": "accept", "values": {"category_code": "MP"}},  # MP is shifted_ic
        {"decision": "reject"},
        {"decision": "accept", "clarity": 9},
        {"decision": "maybe"},
    ]
    for kwargs in bad:
        with pytest.raises(ValidationError):
            services.review_submit(
                reviewer=reviewer, sample=sample, client_uuid=uuid.uuid4(), **kwargs
            )
    assert Review.objects.count() == 0


def test_trimodal_review_corrects_label_and_predicate() -> None:
    """Tri-modal reviewers agreeing on a corrected predicate verify it; alignment is kept."""
    unsafe, _safe = trimodal_pair()
    open_queue(unsafe.dataset, k=2)
    conditions = ["the stove is on (image)", "an alarm sounds (audio)"]
    for _ in range(2):
        submit(
            UserFactory.create(),
            _fresh(unsafe),
            values={"predicate": conditions, "safety_label": "unsafe"},
            image_aligned=True,
            audio_aligned=False,
        )
    sample = _fresh(unsafe)
    assert sample.status == SampleStatus.VERIFIED
    assert sample.predicate == conditions
    assert list(Review.objects.values_list("audio_aligned", flat=True)) == [False, False]


def test_drafts_and_comments() -> None:
    """A draft is kept per reviewer and sample (last save wins); comments must have text."""
    dataset = review_dataset(1)
    sample = _fresh(Sample.objects.get(dataset=dataset))
    reviewer = UserFactory.create(member_of=dataset)
    services.draft_save(sample=sample, reviewer=reviewer, payload={"a": 1})
    services.draft_save(sample=sample, reviewer=reviewer, payload={"a": 2})
    assert Draft.objects.get(sample=sample, reviewer=reviewer).payload == {"a": 2}
    with pytest.raises(ValidationError):
        services.draft_save(sample=sample, reviewer=reviewer, payload={"a": "x" * 70000})
    with pytest.raises(ValidationError):
        services.comment_create(sample=sample, author=reviewer, text=" ")
    assert services.comment_create(sample=sample, author=reviewer, text=" ok ").text == "ok"


def test_settings_are_bounded() -> None:
    """Overlap and lease duration outside their ranges are refused."""
    dataset = mmooc_dataset()
    for overlap, lease in ((0, 60), (11, 60), (2, 5)):
        with pytest.raises(ValidationError):
            queue_services.review_settings_update(
                dataset=dataset,
                overlap=overlap,
                blind=True,
                show_judge_hints=False,
                lease_seconds=lease,
            )
