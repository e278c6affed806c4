"""The API of reviewer exclusions: leads only, the counts of what was settled again, and a
400 with the reason for bad input."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from annotation.models import Sample, SampleStatus
from review.models import ReviewerExclusion
from tests.annotation.factories import UserFactory
from tests.conftest import client_for
from tests.review.factories import review_dataset, submit

pytestmark = pytest.mark.django_db


def test_a_lead_excludes_and_counts_again_by_api(lead: Any, annotator: Any) -> None:
    """POST excludes (201 with the counts), GET lists, DELETE counts again; annotators 403."""
    dataset = review_dataset(1, members=[annotator])
    sample = Sample.objects.select_related("dataset").get(dataset=dataset)
    a, b = UserFactory.create(), UserFactory.create()
    submit(a, sample)
    submit(b, Sample.objects.select_related("dataset").get(pk=sample.pk))
    url = reverse("api_reviewer_exclusions", args=[dataset.pk])
    one = f"{url}?reviewer={a.username}"
    body = {"reviewer": a.username, "reason": "gold"}
    assert client_for(annotator).post(url, body, format="json").status_code == 403
    assert client_for(annotator).get(url).status_code == 403
    assert client_for(annotator).delete(one).status_code == 403
    assert not ReviewerExclusion.objects.exists()
    created = client_for(lead).post(url, body, format="json")
    assert created.status_code == 201
    assert created.json() == {"affected": 1, "resettled": 0, "returned": 1, "left": 0}
    (listed,) = client_for(lead).get(url).json()
    assert (listed["reviewer"], listed["excluded_by"], listed["reason"]) == (
        a.username,
        lead.username,
        "gold",
    )
    assert client_for(lead).delete(one).json()["resettled"] == 1
    assert Sample.objects.get(pk=sample.pk).status == SampleStatus.VERIFIED


def test_bad_input_gets_a_400_with_the_reason(lead: Any) -> None:
    """A missing reviewer, a second exclusion, undoing none: 400 with the reason; an unknown
    reviewer: 404; nothing written."""
    dataset = review_dataset(1)
    reviewer = UserFactory.create()
    url = reverse("api_reviewer_exclusions", args=[dataset.pk])
    client = client_for(lead)
    unknown = client.post(url, {"reviewer": "nobody"}, format="json")
    assert unknown.status_code == 404 and "No such reviewer" in unknown.json()["detail"]
    assert client.post(url, {}, format="json").status_code == 400
    assert client.post(url, {"reviewer": reviewer.username}, format="json").status_code == 201
    again = client.post(url, {"reviewer": reviewer.username}, format="json")
    assert again.status_code == 400 and "already excluded" in str(again.json())
    assert client.delete(f"{url}?reviewer=nobody").status_code == 404
    assert client.delete(url).status_code == 400
    one = f"{url}?reviewer={reviewer.username}"
    assert client.delete(one).status_code == 200
    refused = client.delete(one)
    assert refused.status_code == 400 and "not excluded" in str(refused.json())
    assert not ReviewerExclusion.objects.exists()
