"""Site-level commands: the demo."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Sample
from review.models import Slot

pytestmark = pytest.mark.django_db


def test_the_demo_command_prints_the_logins_and_opens_the_review_queues() -> None:
    """After `manage.py demo` an annotator can start reviewing at once."""
    out = StringIO()
    call_command("demo", stdout=out)
    assert "annotator" in out.getvalue() and "demo-annotator" in out.getvalue()
    queued = Sample.objects.filter(dataset__name__startswith="Demo ", status="pending_review")
    assert Slot.objects.filter(sample__in=queued).count() == 2 * queued.count() > 0
