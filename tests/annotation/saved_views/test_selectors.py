"""Reads of the sample list's layouts and saved views (annotation/saved_views/selectors.py)."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.saved_views.columns import DEFAULT_COLUMNS, DEFAULT_PAGE_SIZE
from annotation.saved_views.selectors import (
    sample_list_layout,
    saved_view_get,
    saved_views_visible,
)
from tests.annotation.factories import UserFactory, mmooc_dataset
from tests.annotation.saved_view_factories import SampleListLayoutFactory, SavedViewFactory

pytestmark = pytest.mark.django_db


def test_a_lead_sees_their_own_views_and_the_shared_ones_of_the_dataset(lead: Any) -> None:
    dataset = mmooc_dataset()
    other = UserFactory.create(role="lead")
    mine = SavedViewFactory.create(dataset=dataset, owner=lead, name="b mine")
    shared = SavedViewFactory.create(dataset=dataset, owner=other, shared=True, name="a shared")
    private = SavedViewFactory.create(dataset=dataset, owner=other, name="c private")
    SavedViewFactory.create(owner=lead, name="elsewhere")  # another dataset's
    assert list(saved_views_visible(user=lead, dataset=dataset)) == [shared, mine]
    assert saved_view_get(user=lead, dataset=dataset, view_id=private.pk) is None
    assert saved_view_get(user=other, dataset=dataset, view_id=private.pk) == private


def test_annotators_and_auditors_see_no_view(annotator: Any, auditor: Any) -> None:
    view = SavedViewFactory.create(shared=True)
    for user in (annotator, auditor):
        assert not saved_views_visible(user=user, dataset=view.dataset).exists()
        assert saved_view_get(user=user, dataset=view.dataset, view_id=view.pk) is None


def test_a_view_stops_being_seen_by_someone_no_longer_lead() -> None:
    view = SavedViewFactory.create()
    owner = view.owner
    owner.groups.clear()
    owner = type(owner).objects.get(pk=owner.pk)  # roles are cached per user object
    assert saved_view_get(user=owner, dataset=view.dataset, view_id=view.pk) is None


def test_the_layout_comes_from_the_url_then_the_view_then_what_is_kept(lead: Any) -> None:
    dataset = mmooc_dataset()
    assert sample_list_layout(user=lead, dataset=dataset).columns == DEFAULT_COLUMNS
    assert sample_list_layout(user=lead, dataset=dataset).page_size == DEFAULT_PAGE_SIZE
    SampleListLayoutFactory.create(user=lead, dataset=dataset, columns=["question"], page_size=25)
    kept = sample_list_layout(user=lead, dataset=dataset)
    assert (kept.columns, kept.page_size, kept.view) == (("external_id", "question"), 25, None)
    view = SavedViewFactory.create(dataset=dataset, owner=lead, columns=["status"], page_size=200)
    opened = sample_list_layout(user=lead, dataset=dataset, view_id=view.pk)
    assert (opened.columns, opened.page_size, opened.view) == (("external_id", "status"), 200, view)
    given = sample_list_layout(
        user=lead, dataset=dataset, view_id=view.pk, columns=("id",), page_size=100
    )
    assert (given.columns, given.page_size, given.view) == (("id", "external_id"), 100, view)


def test_a_reviewers_layout_never_shows_gold(annotator: Any) -> None:
    dataset = mmooc_dataset()
    SampleListLayoutFactory.create(user=annotator, dataset=dataset, columns=["gold", "status"])
    layout = sample_list_layout(user=annotator, dataset=dataset)
    assert layout.columns == ("external_id", "status") and layout.views == []
    assert "gold" not in sample_list_layout(user=annotator, dataset=mmooc_dataset()).columns
