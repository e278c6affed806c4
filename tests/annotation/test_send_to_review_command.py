"""python manage.py send_to_review: sends a dataset's samples of one status to review and
prints how many it sent and how many review slots it opened."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Sample, SampleRevision, SampleStatus
from review.models import Slot
from tests.annotation.factories import mmooc_dataset, mmooc_sample

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("send_to_review", *args, stdout=out)
    return out.getvalue()


def test_sends_imported_samples_and_reports_the_slots(lead: Any) -> None:
    """Imported samples move with their history; a second run sends nothing."""
    dataset = mmooc_dataset(name="LogicVista")
    for _ in range(3):
        mmooc_sample(dataset, status=SampleStatus.IMPORTED)
    mmooc_sample(dataset, status=SampleStatus.REJECTED)
    out = run("--dataset", "LogicVista", "--user", lead.username)
    assert "Sent 3 imported samples of 'LogicVista' to review; opened 6 review slots." in out
    assert Slot.objects.count() == 6
    assert (
        SampleRevision.objects.filter(changed_by=lead, after={"status": "pending_review"}).count()
        == 3
    )
    assert "Sent 0 imported samples" in run("--dataset", "LogicVista")
    again = run("--dataset", "LogicVista", "--status", "rejected")
    assert "Sent 1 rejected samples" in again and "opened 2 review slots" in again
    assert not Sample.objects.exclude(status=SampleStatus.PENDING_REVIEW).exists()


def test_unknown_dataset_user_or_status_fail_with_a_reason() -> None:
    """A missing dataset or user, or a status that cannot be sent, ends with a readable error."""
    mmooc_dataset(name="d")
    with pytest.raises(CommandError, match="no dataset named 'nope'"):
        run("--dataset", "nope")
    with pytest.raises(CommandError, match="no user named 'ghost'"):
        run("--dataset", "d", "--user", "ghost")
    with pytest.raises(CommandError, match="invalid choice"):
        run("--dataset", "d", "--status", "in_review")
