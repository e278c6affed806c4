"""The submission's statements (review/services/submit_sql.py): the rows each way of settling
leaves, nothing when the sample moved meanwhile, the round's reviews counted in order."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.models import NoteKey, Sample, SampleNote, SampleRevision, SampleStatus
from review.models import Outcome, Review, Slot
from review.services import submit_sql
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset, submit

pytestmark = pytest.mark.django_db

SCENARIOS: dict[str, tuple[int, list[dict[str, Any]]]] = {
    "verified": (2, [{}, {}]),
    "rejected": (
        2,
        [
            {"decision": "reject", "reject_reason": "duplicate"},
            {"decision": "reject", "reject_reason": "licence"},
        ],
    ),
    "adjudication": (2, [{}, {"decision": "reject"}]),
    "edited": (2, [{"values": {"scenario": "math"}}, {"values": {"scenario": "math"}}]),
    "one review": (1, [{"note": " fine ", "clarity": 3, "seconds_spent": 4}]),
}


def _rows(sample: Sample) -> dict[str, Any]:
    """What a review loop wrote for a sample, without ids and times."""
    fresh = Sample.objects.get(pk=sample.pk)
    return {
        "sample": (fresh.status, fresh.revision, fresh.scenario),
        "reviews": list(
            Review.objects.filter(sample=sample)
            .order_by("id")
            .values_list(
                "reviewer__username",
                "decision",
                "reject_reason",
                "values",
                "clarity",
                "note",
                "seconds_spent",
                "round",
            )
        ),
        "slots": list(
            Slot.objects.filter(sample=sample).order_by("id").values_list("done", "position")
        ),
        "history": list(
            SampleRevision.objects.filter(sample=sample).values_list(
                "number", "changed_by__username", "source", "before", "after", "reason"
            )
        ),
        "outcome": list(
            Outcome.objects.filter(sample=sample).values_list(
                "status", "agreement", "adjudicated", "note"
            )
        ),
        "note": list(SampleNote.objects.filter(sample=sample).values_list("key", "value")),
    }


# Per scenario: the status reached, the history's status steps and whether the summary note
# (and an outcome with agreement) is written.
EXPECTED: dict[str, tuple[str, list[tuple[str, str]], bool]] = {
    "verified": ("verified", [("pending_review", "in_review"), ("in_review", "verified")], True),
    "rejected": ("rejected", [("pending_review", "in_review"), ("in_review", "rejected")], True),
    "adjudication": (
        "needs_adjudication",
        [("pending_review", "in_review"), ("in_review", "needs_adjudication")],
        False,
    ),
    "edited": ("verified", [("pending_review", "in_review"), ("in_review", "verified")], True),
    "one review": ("verified", [("pending_review", "verified")], True),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_each_way_of_settling_leaves_its_reviews_slots_history_outcome_and_note(
    scenario: str,
) -> None:
    """Reviewers reviewing a sample leave one review each in its slot (done), the status
    steps in the history with who and why, the outcome, the summary note naming them, and
    an agreed edit applied to the sample."""
    k, verdicts = SCENARIOS[scenario]
    status, steps, agreed = EXPECTED[scenario]
    reviewers = [UserFactory.create() for _ in verdicts]
    sample = Sample.objects.get(dataset=review_dataset(1, k=k))
    results = [
        submit(reviewer, sample, **dict(verdict))
        for reviewer, verdict in zip(reviewers, verdicts, strict=True)
    ]
    rows = _rows(sample)
    assert [r.settled_status for r in results] == [None] * (len(verdicts) - 1) + [status]
    assert rows["sample"][0] == status
    assert rows["sample"][2] == ("math" if scenario == "edited" else sample.scenario)
    assert [r[0] for r in rows["reviews"]] == [r.username for r in reviewers]
    assert rows["slots"] == [(True, position) for position in range(k)]
    history = [(h[3].get("status"), h[4].get("status")) for h in rows["history"]]
    assert [step for step in history if None not in step and step[0] != step[1]] == steps
    assert rows["outcome"] == [(status, agreed, False, "")]
    notes = dict(rows["note"])
    if agreed:
        assert notes[NoteKey.REVIEW_SUMMARY]["reviewers"] == [r.username for r in reviewers]
    else:
        assert NoteKey.REVIEW_SUMMARY not in notes


def test_the_settlement_writes_nothing_when_the_sample_moved_meanwhile() -> None:
    """Read as "in review" but taken down since: no history, outcome, note or slot change,
    and the caller is told so (it then takes annotation's full update)."""
    sample = Sample.objects.select_related("dataset").get(dataset=review_dataset(1, k=2))
    submit(UserFactory.create(), sample)
    sample = Sample.objects.select_related("dataset").get(pk=sample.pk)
    Sample.objects.filter(pk=sample.pk).update(status=SampleStatus.REMOVED)
    before = _rows(sample)
    settlement = submit_sql.Settlement(
        from_status=sample.status,
        to_status=SampleStatus.VERIFIED,
        reason="r",
        agreement=True,
        summary={"reviewers": []},
        close_open_slots=True,
    )
    settled = submit_sql.settle_write(
        sample_id=sample.pk, dataset_id=sample.dataset_id, by_id=None, settlement=settlement
    )
    assert not settled.written
    assert _rows(sample) == before
    assert sample.status == SampleStatus.IN_REVIEW


def test_a_settling_review_is_counted_with_the_rounds_others_oldest_first() -> None:
    """The settling statement reads the other counted reviews; the summary names every
    reviewer in the order they reviewed."""
    sample = Sample.objects.get(dataset=review_dataset(1, k=3))
    reviewers = [UserFactory.create() for _ in range(3)]
    for reviewer in reviewers:
        submit(reviewer, sample)
    note = SampleNote.objects.get(sample=sample, key=NoteKey.REVIEW_SUMMARY)
    assert note.value is not None
    assert note.value["reviewers"] == [r.username for r in reviewers]
