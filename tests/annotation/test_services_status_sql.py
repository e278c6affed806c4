"""A sample's status step and a note upsert as parts of one PostgreSQL statement
(annotation/services/status_sql.py): the rows ``sample_advance_status`` and
``sample_set_note`` write, or nothing when the sample left the expected status."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from annotation.models import ChangeSource, NoteKey, SampleNote, SampleRevision, SampleStatus
from annotation.services.status_sql import Statement, note_upsert_cte, status_step_cte
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's statements"),
]

NOW = dt.datetime(2026, 12, 1, 12, tzinfo=dt.UTC)


def _step(sample_id: int, from_status: str, by_id: int | None) -> int | None:
    statement = Statement()
    status_step_cte(
        statement,
        name="step",
        sample_id=sample_id,
        from_status=from_status,
        to_status=SampleStatus.IN_REVIEW,
        by_id=by_id,
        source=ChangeSource.REVIEW,
        reason="First review submitted.",
        now=NOW,
    )
    note_upsert_cte(
        statement,
        name="noted",
        sample_id=sample_id,
        key=NoteKey.REVIEW_SUMMARY,
        value={"reviewers": ["a"]},
        now=NOW,
        after="step",
    )
    with connection.cursor() as cursor:
        cursor.execute(statement.sql("SELECT revision FROM step"), statement.params)
        row = cursor.fetchone()
    return None if row is None else row[0]


def test_the_step_moves_the_status_with_its_history_and_note() -> None:
    """From the expected status: the status moves, the revision counts, the history row and
    the note are written."""
    sample = mmooc_sample(mmooc_dataset(), status=SampleStatus.PENDING_REVIEW)
    user = UserFactory.create()
    revision = _step(sample.pk, SampleStatus.PENDING_REVIEW, user.pk)
    assert revision is not None
    sample.refresh_from_db()
    assert (sample.status, sample.revision) == (SampleStatus.IN_REVIEW, revision)
    history = SampleRevision.objects.get(sample=sample, number=revision)
    assert (history.changed_by, history.source, history.changed_at) == (
        user,
        ChangeSource.REVIEW,
        NOW,
    )
    assert (history.before, history.after) == (
        {"status": SampleStatus.PENDING_REVIEW},
        {"status": SampleStatus.IN_REVIEW},
    )
    assert SampleNote.objects.get(sample=sample).value == {"reviewers": ["a"]}


def test_the_step_writes_nothing_from_another_status() -> None:
    """A sample no longer in the expected status keeps its status, history and notes."""
    sample = mmooc_sample(mmooc_dataset(), status=SampleStatus.VERIFIED)
    revisions = SampleRevision.objects.filter(sample=sample).count()
    assert _step(sample.pk, SampleStatus.PENDING_REVIEW, None) is None
    sample.refresh_from_db()
    assert sample.status == SampleStatus.VERIFIED
    assert SampleRevision.objects.filter(sample=sample).count() == revisions
    assert not SampleNote.objects.filter(sample=sample).exists()


def test_an_unknown_status_is_refused() -> None:
    """A status outside the workflow is refused before any SQL is built."""
    with pytest.raises(ValidationError, match="Unknown status"):
        status_step_cte(
            Statement(),
            name="step",
            sample_id=1,
            from_status=SampleStatus.PENDING_REVIEW,
            to_status="lost",
            by_id=None,
            source=ChangeSource.REVIEW,
            reason="",
            now=NOW,
        )
