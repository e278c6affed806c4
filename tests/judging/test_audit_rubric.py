"""The rubric read from a form posted without script: texts become the values it checks."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from judging.audit import rubric
from judging.models import AuditTask


def test_posted_texts_become_the_rubrics_values() -> None:
    """Scores are numbers (a binary one an int), labels stay texts; each passes the check."""
    scoring = rubric.posted_values(
        AuditTask.SCORING, {"answer_score": "1", "reasoning_score": "0.25"}
    )
    assert scoring == {"answer_score": 1, "reasoning_score": 0.25}
    assert isinstance(scoring["answer_score"], int)
    assert rubric.rubric_check(task=AuditTask.SCORING, values=scoring).reasoning_score == 0.25
    assert rubric.posted_values(AuditTask.ANSWERABILITY, {"refused": "0"}) == {"refused": 0}
    assert rubric.posted_values(AuditTask.SAFETY, {"safety_label": " unsafe "}) == {
        "safety_label": "unsafe"
    }


def test_missing_or_wrong_texts_are_refused_by_the_check() -> None:
    """An empty, non-numeric or out-of-rubric text is refused with that field's message."""
    for posted in ({}, {"answer_score": "yes", "reasoning_score": "nan"}, {"answer_score": "2"}):
        values = rubric.posted_values(AuditTask.SCORING, posted)
        with pytest.raises(ValidationError) as refused:
            rubric.rubric_check(task=AuditTask.SCORING, values=values)
        assert set(refused.value.message_dict) == {"answer_score", "reasoning_score"}
