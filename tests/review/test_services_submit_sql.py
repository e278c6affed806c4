"""The submission's writes and the settlement's as one PostgreSQL statement each
(review/services/submit_sql.py): the same rows as the ORM path, nothing when the sample moved."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from annotation.models import NoteKey, Sample, SampleNote, SampleRevision, SampleStatus
from review.models import Outcome, Review, Slot
from review.services import submit_sql
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset, submit

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's statements"),
]

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


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_statements_write_what_the_orm_steps_write(
    scenario: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same reviewers reviewing alike samples, once with the statements and once with
    the ORM steps, leave the same reviews, slots, status, history, outcome and note."""
    k, verdicts = SCENARIOS[scenario]
    reviewers = [UserFactory.create() for _ in verdicts]
    written = []
    for enabled in (True, False):
        monkeypatch.setattr(submit_sql, "ENABLED", enabled)
        sample = Sample.objects.get(dataset=review_dataset(1, k=k))
        results = [
            submit(reviewer, sample, **dict(verdict))
            for reviewer, verdict in zip(reviewers, verdicts, strict=True)
        ]
        written.append(([r.settled_status for r in results], _rows(sample)))
    assert written[0] == written[1]
    assert written[0][1]["history"]  # the comparison is not of empty tables


def test_the_settlement_writes_nothing_when_the_sample_moved_meanwhile() -> None:
    """Read as "in review" but taken down since: no history, outcome, note or slot change,
    and the caller is told so (it then takes annotation's full update)."""
    sample = Sample.objects.select_related("dataset").get(dataset=review_dataset(1, k=2))
    submit(UserFactory.create(), sample)
    sample = Sample.objects.select_related("dataset").get(pk=sample.pk)
    Sample.objects.filter(pk=sample.pk).update(status=SampleStatus.REMOVED)
    before = _rows(sample)
    settlement = submit_sql.Settlement(
        status=SampleStatus.VERIFIED,
        reason="r",
        agreement=True,
        summary={"reviewers": []},
        delete_open_slots=True,
    )
    assert not submit_sql.settle_write(sample=sample, by=None, settlement=settlement)
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
