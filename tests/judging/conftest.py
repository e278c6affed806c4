"""Fixtures of the judging tests: an audit set drawn for the auditor fixture's dataset."""

from __future__ import annotations

from typing import Any

import pytest

from judging.models import AuditSet
from tests.judging import audit_factories as af


@pytest.fixture
def audit_set(auditor: Any) -> AuditSet:
    """Twelve items drawn from twenty scored samples, a quarter rated twice; the auditor is a
    member of the dataset."""
    dataset, _ = af.scoring_dataset(n_samples=20)
    af.add_member(dataset, auditor)
    return af.draw(dataset, size=12, double_rating_fraction=0.25)
