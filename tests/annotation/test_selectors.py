"""Reads of the annotation app (annotation/selectors.py) that other apps build on."""

from __future__ import annotations

import pytest

from annotation import selectors, services
from annotation.models import ChangeSource
from tests.annotation.factories import mmooc_dataset, mmooc_sample


@pytest.mark.django_db
def test_label_revisions_give_the_values_before_each_change_of_the_sources_asked() -> None:
    """Only the sources asked for, in sample and revision order, with the values before."""
    dataset = mmooc_dataset()
    first, second = mmooc_sample(dataset), mmooc_sample(dataset)
    for sample, source, category in (
        (second, ChangeSource.REVIEW, "MA"),
        (first, ChangeSource.EDIT, "MA"),
        (first, ChangeSource.ADJUDICATION, "MKB"),
    ):
        services.sample_update(
            sample=sample, changes={"category_code": category}, by=None, source=source
        )
    rows = selectors.label_revisions(
        dataset=dataset, sources=[ChangeSource.REVIEW, ChangeSource.ADJUDICATION]
    )
    assert [(sample_id, before) for sample_id, _at, before in rows] == [
        (first.pk, {"category_code": "MA"}),
        (second.pk, {"category_code": "VFP"}),
    ]
    assert selectors.label_revisions(dataset=mmooc_dataset(), sources=[ChangeSource.EDIT]) == []
