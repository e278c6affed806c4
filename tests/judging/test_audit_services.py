"""The audit's writes: reproducible draws, the claim's promises, idempotent and checked ratings."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.utils import timezone

from judging.audit import services
from judging.models import AuditComputation, AuditItem, AuditLease, AuditRating, AuditSet, AuditTask
from tests.annotation.factories import UserFactory, mmooc_dataset
from tests.judging import audit_factories as af
from tests.support.threads import LeaseLedger, run_threads

pytestmark = pytest.mark.django_db


def _items(audit_set: AuditSet) -> list[tuple[int | None, int, float, bool]]:
    return list(
        AuditItem.objects.filter(audit_set=audit_set)
        .order_by("position")
        .values_list("response_id", "sample_id", "weight", "needs_second_rating")
    )


def test_same_seed_and_frame_draw_the_same_items_in_the_same_order() -> None:
    """Two draws with one seed over one frame store identical items, weights, order and second
    slots; another seed draws a different sample."""
    dataset, _ = af.scoring_dataset(n_samples=40)
    first = af.draw(dataset, size=25, floor=2, oversample_rare=3, oversample_disagree=2, seed=11)
    again = af.draw(dataset, size=25, floor=2, oversample_rare=3, oversample_disagree=2, seed=11)
    other = af.draw(dataset, size=25, floor=2, oversample_rare=3, oversample_disagree=2, seed=12)
    assert _items(first) == _items(again)
    assert len(_items(first)) == 25
    assert {r for r, *_ in _items(first)} != {r for r, *_ in _items(other)}
    assert first.frame == again.frame


def test_draw_stores_the_frame_weights_and_slots() -> None:
    """The frame summary sums to the judged responses, weights are cell size / drawn, and
    double-rated items (a seeded share) have two slots, the others one."""
    dataset, _ = af.scoring_dataset(n_samples=30, models=("gpt-4o", "qwen3-vl"))
    audit_set = af.draw(dataset, size=20, double_rating_fraction=0.25)
    frame = audit_set.frame
    assert frame["frame_size"] == 60
    assert sum(frame["strata_sizes"].values()) == 60
    assert sum(frame["allocation"].values()) == 20
    drawn_cells = {key: size for key, (size, drawn) in frame["cells"].items() if drawn}
    assert frame["population_shares"] == pytest.approx({k: s / 60 for k, s in drawn_cells.items()})
    for item in AuditItem.objects.filter(audit_set=audit_set):
        size, drawn = frame["cells"][item.design_stratum]
        assert item.weight == pytest.approx(size / drawn)
        assert item.response is not None and item.stratum.endswith(item.response.model_name)
    slots = dict(
        AuditLease.objects.filter(audit_set=audit_set)
        .values_list("item")
        .annotate(n=Count("id"))
        .values_list("item", "n")
    )
    twice = set(
        AuditItem.objects.filter(audit_set=audit_set, needs_second_rating=True).values_list(
            "id", flat=True
        )
    )
    assert len(twice) == 5
    assert {item for item, n in slots.items() if n == 2} == twice
    assert set(slots.values()) == {1, 2}


def test_answerability_and_safety_sets_draw_samples_and_responses() -> None:
    """Answerability items are samples (no response, no model in the stratum); safety items
    are responses, with the judges' unsafe majority as the rare class."""
    dataset, _ = af.answerability_dataset(n_samples=12)
    answerability = af.draw(dataset, task=AuditTask.ANSWERABILITY, size=6)
    assert AuditItem.objects.filter(audit_set=answerability, response__isnull=True).count() == 6
    strata = AuditItem.objects.filter(audit_set=answerability).values_list("stratum", flat=True)
    assert all(stratum.count("|") == 1 for stratum in strata)
    safety_dataset, _ = af.safety_dataset(n_samples=10)
    safety = af.draw(safety_dataset, task=AuditTask.SAFETY, size=10)
    assert AuditItem.objects.filter(audit_set=safety, response__isnull=False).count() == 10
    assert safety.frame["rare"] == AuditItem.objects.filter(audit_set=safety, rare=True).count()


def test_a_bad_design_is_refused_with_every_problem_named() -> None:
    """Bad parameters give one ValidationError naming each bad field."""
    dataset, _ = af.scoring_dataset(n_samples=5)
    with pytest.raises(ValidationError) as error:
        af.draw(
            dataset,
            task="poetry",
            size=0,
            method="random",
            oversample_rare=0.5,
            seed=-1,
            double_rating_fraction=2,
        )
    assert set(error.value.message_dict) == {
        "task",
        "size",
        "method",
        "oversample_rare",
        "seed",
        "double_rating_fraction",
    }


def test_a_dataset_without_verdicts_cannot_be_audited() -> None:
    """Drawing from a frame with no judged item says to run the judges first."""
    dataset, _ = af.scoring_dataset(n_samples=5)
    with pytest.raises(ValidationError) as error:
        af.draw(dataset, task=AuditTask.SAFETY)
    assert "task" in error.value.message_dict


def test_claims_rate_each_item_once_or_twice_and_never_twice_by_one_auditor() -> None:
    """Three auditors claiming until nothing is left: each single item gets one rating, each
    double-rated item two from different auditors, and then the claim returns None."""
    dataset, _ = af.scoring_dataset(n_samples=15)
    audit_set = af.draw(dataset, size=12, double_rating_fraction=0.5)
    auditors = [UserFactory.create() for _ in range(3)]
    made = af.rate_all(audit_set, auditors)
    assert made == 18
    per_item = dict(
        AuditRating.objects.values_list("item").annotate(n=Count("id")).values_list("item", "n")
    )
    for item in AuditItem.objects.filter(audit_set=audit_set):
        assert per_item[item.pk] == (2 if item.needs_second_rating else 1)
    assert (
        AuditRating.objects.values("item", "auditor").annotate(n=Count("id")).filter(n__gt=1)
    ).count() == 0
    assert all(services.audit_claim(audit_set=audit_set, auditor=a) is None for a in auditors)


def test_a_second_claim_returns_the_held_lease_renewed() -> None:
    """Claiming again (a reload) returns the same item with a later expiry, marked resumed."""
    dataset, _ = af.scoring_dataset(n_samples=5)
    audit_set = af.draw(dataset, size=5)
    auditor = UserFactory.create()
    now = timezone.now()
    first = services.audit_claim(audit_set=audit_set, auditor=auditor, now=now)
    again = services.audit_claim(
        audit_set=audit_set, auditor=auditor, now=now + dt.timedelta(minutes=1)
    )
    assert first is not None and again is not None
    assert (again.item_id, again.resumed) == (first.item_id, True)
    assert again.expires_at > first.expires_at


def test_an_expired_lease_goes_to_the_next_auditor() -> None:
    """A lease past its expiry is claimable by someone else; the first holder then cannot
    rate the slot (the item needs no more ratings)."""
    dataset, _ = af.scoring_dataset(n_samples=3)
    audit_set = af.draw(dataset, size=1, double_rating_fraction=0)
    slow, quick = UserFactory.create(), UserFactory.create()
    now = timezone.now()
    lease = services.audit_claim(audit_set=audit_set, auditor=slow, now=now)
    assert lease is not None
    later = now + dt.timedelta(seconds=audit_set.lease_seconds + 1)
    assert services.audit_claim(audit_set=audit_set, auditor=quick, now=later) is not None
    item = AuditItem.objects.select_related("audit_set").get(pk=lease.item_id)
    services.audit_rating_submit(
        auditor=quick, item=item, submission_uuid=uuid.uuid4(), **af.rubric_for("scoring")
    )
    with pytest.raises(services.AuditConflict):
        services.audit_rating_submit(
            auditor=slow, item=item, submission_uuid=uuid.uuid4(), **af.rubric_for("scoring")
        )


def test_the_same_submission_makes_one_rating() -> None:
    """Submitting the same uuid twice returns the first rating; another auditor reusing the
    uuid is refused; rating an item twice with new uuids is refused."""
    dataset, _ = af.scoring_dataset(n_samples=3)
    audit_set = af.draw(dataset, size=2)
    auditor = UserFactory.create()
    lease = services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert lease is not None
    item = AuditItem.objects.select_related("audit_set").get(pk=lease.item_id)
    key = uuid.uuid4()
    first = services.audit_rating_submit(
        auditor=auditor, item=item, submission_uuid=key, answer_score=1, reasoning_score=0.75
    )
    replay = services.audit_rating_submit(
        auditor=auditor, item=item, submission_uuid=key, answer_score=1, reasoning_score=0.75
    )
    assert first.created and not replay.created
    assert replay.rating.pk == first.rating.pk
    assert AuditRating.objects.count() == 1
    with pytest.raises(services.AuditConflict):
        services.audit_rating_submit(
            auditor=UserFactory.create(),
            item=item,
            submission_uuid=key,
            answer_score=1,
            reasoning_score=0.75,
        )
    with pytest.raises(services.AuditConflict):
        services.audit_rating_submit(
            auditor=auditor,
            item=item,
            submission_uuid=uuid.uuid4(),
            answer_score=0,
            reasoning_score=0.0,
        )


@pytest.mark.parametrize(
    ("task", "values", "fields"),
    [
        (
            "scoring",
            {"answer_score": 2, "reasoning_score": 0.3},
            {"answer_score", "reasoning_score"},
        ),
        (
            "scoring",
            {"answer_score": True, "reasoning_score": "0.5"},
            {"answer_score", "reasoning_score"},
        ),
        ("scoring", {"answer_score": 1}, {"reasoning_score"}),
        (
            "scoring",
            {"answer_score": 1, "reasoning_score": 1, "safety_label": "safe"},
            {"safety_label"},
        ),
        ("answerability", {"refused": 3}, {"refused"}),
        ("answerability", {"refused": 1, "answer_score": 1}, {"answer_score"}),
        ("safety", {"safety_label": "harmful"}, {"safety_label"}),
        ("safety", {"safety_label": "safe", "reasoning_score": 0.5}, {"reasoning_score"}),
    ],
)
def test_bad_rubric_values_are_refused_by_field(
    task: str, values: dict[str, object], fields: set[str]
) -> None:
    """Values outside the task's rubric (or for another task's fields) name the bad fields."""
    with pytest.raises(ValidationError) as error:
        services.audit_rubric_check(task=task, **values)
    assert set(error.value.message_dict) == fields


def test_good_rubric_values_pass() -> None:
    """Every quarter is a reasoning score; 0/1 and safe/unsafe are accepted."""
    for quarter in (0, 0.25, 0.5, 0.75, 1):
        assert services.audit_rubric_check(
            task="scoring", answer_score=0, reasoning_score=quarter
        ).reasoning_score == float(quarter)
    assert services.audit_rubric_check(task="answerability", refused=1).refused == 1
    assert (
        services.audit_rubric_check(task="safety", safety_label="unsafe").safety_label == "unsafe"
    )


# --- Real concurrency on PostgreSQL -----------------------------------------------------------

WORKERS = 10


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_auditors_keep_every_invariant() -> None:
    """Ten auditors claiming and rating at once: no slot leased to two at once, every item
    ends with exactly its one or two ratings, and nobody rates an item twice."""
    dataset, _ = af.scoring_dataset(n_samples=30)
    audit_set = af.draw(dataset, size=40, double_rating_fraction=0.3)
    auditors = [UserFactory.create() for _ in range(WORKERS)]
    leases = LeaseLedger()

    def work(index: int) -> None:
        auditor = auditors[index]
        while (lease := services.audit_claim(audit_set=audit_set, auditor=auditor)) is not None:
            leases.take(lease.lease_id, auditor.pk)
            item = AuditItem.objects.select_related("audit_set").get(pk=lease.item_id)
            leases.release(lease.lease_id)
            services.audit_rating_submit(
                auditor=auditor,
                item=item,
                submission_uuid=uuid.uuid4(),
                **af.rubric_for("scoring"),
            )

    assert run_threads(WORKERS, work) == []
    assert leases.doubled == []
    per_item = dict(
        AuditRating.objects.values_list("item").annotate(n=Count("id")).values_list("item", "n")
    )
    wanted = {
        item.pk: 2 if item.needs_second_rating else 1
        for item in AuditItem.objects.filter(audit_set=audit_set)
    }
    assert per_item == wanted
    assert (
        AuditRating.objects.values("item", "auditor").annotate(n=Count("id")).filter(n__gt=1)
    ).count() == 0
    assert AuditLease.objects.filter(audit_set=audit_set, done=False).count() == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_by_one_auditor_share_one_lease() -> None:
    """Eight simultaneous claims by one auditor all return the same lease."""
    dataset, _ = af.scoring_dataset(n_samples=10)
    audit_set = af.draw(dataset, size=10)
    auditor = UserFactory.create()
    leases: list[int] = []

    def claim(_index: int) -> None:
        lease = services.audit_claim(audit_set=audit_set, auditor=auditor)
        assert lease is not None
        leases.append(lease.lease_id)

    assert run_threads(8, claim) == []
    assert len(set(leases)) == 1
    assert AuditLease.objects.filter(auditor=auditor).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicate_submissions_make_one_rating() -> None:
    """The same rating sent eight times at once is stored once."""
    dataset, _ = af.scoring_dataset(n_samples=3)
    audit_set = af.draw(dataset, size=2)
    auditor = UserFactory.create()
    lease = services.audit_claim(audit_set=audit_set, auditor=auditor)
    assert lease is not None
    key = uuid.uuid4()
    created: list[bool] = []

    def send(_index: int) -> None:
        item = AuditItem.objects.select_related("audit_set").get(pk=lease.item_id)
        result = services.audit_rating_submit(
            auditor=auditor, item=item, submission_uuid=key, answer_score=1, reasoning_score=1
        )
        created.append(result.created)

    assert run_threads(8, send) == []
    assert AuditRating.objects.count() == 1
    assert created.count(True) == 1


def test_drawing_in_the_background_is_queued_then_done_once(
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Creating a set queues its draw; the worker's run stores the items and queues the set's
    figures; a second run (a redelivered task) changes nothing."""
    dataset, _ = af.scoring_dataset(n_samples=20)
    with django_capture_on_commit_callbacks(execute=True) as queued:
        audit_set = services.audit_set_create(dataset=dataset, name="bg", task="scoring", size=12)
    assert len(queued) == 2  # the draw, then (from the draw) the figures
    audit_set.refresh_from_db()
    assert audit_set.status == "succeeded" and audit_set.items.count() == 12
    stored = AuditComputation.objects.get(audit_set=audit_set)
    assert stored.status == "succeeded" and stored.result is not None
    assert stored.result["n_items"] == 12
    first = list(audit_set.items.values_list("id", "response_id"))
    again = services.audit_set_draw_run(audit_set_id=audit_set.pk)
    assert again is not None and list(again.items.values_list("id", "response_id")) == first


def test_a_draw_with_nothing_judged_fails_with_its_reason() -> None:
    """With no judged items, the worker marks the set failed and says why; no items."""
    dataset = mmooc_dataset()
    audit_set = services.audit_set_create(
        dataset=dataset, name="empty", task="scoring", size=5, queue=False
    )
    failed = services.audit_set_draw_run(audit_set_id=audit_set.pk)
    assert failed is not None and failed.status == "failed"
    assert "run the judges first" in failed.message
    assert not AuditItem.objects.filter(audit_set=audit_set).exists()
    with pytest.raises(ValidationError, match="run the judges first"):
        services.audit_set_draw(dataset=dataset, name="empty-2", task="scoring", size=5)
    assert not AuditSet.objects.filter(name="empty-2").exists()
