"""The lead's page of quality in consensus: who may use it, excluding and counting again
through it, the estimate it shows, the bulk send to adjudication, bad input, query counts."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Dataset, Sample, SampleStatus
from review.exclusions import selectors as consensus_selectors
from review.models import ReviewerExclusion
from tests.annotation.factories import UserFactory
from tests.review.exclusions.test_selectors import answer_gold
from tests.review.factories import blind_settings, review_dataset, submit

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _reviewed(n: int, *, disagree: bool = False) -> tuple[Dataset, Any, Any]:
    """n samples reviewed by a and b (b rejects when ``disagree``)."""
    dataset = review_dataset(n)
    a, b = UserFactory.create(), UserFactory.create()
    for sample in Sample.objects.filter(dataset=dataset).select_related("dataset"):
        submit(a, sample)
        fresh = Sample.objects.select_related("dataset").get(pk=sample.pk)
        submit(b, fresh, "reject" if disagree else "accept")
    return dataset, a, b


def _messages(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_annotators_can_neither_see_nor_exclude(annotator: Any) -> None:
    """403 on the page and on every action, and nothing is written."""
    dataset, a, _b = _reviewed(1)
    client = _client(annotator)
    args = [dataset.pk]
    assert client.get(reverse("review:consensus_quality", args=args)).status_code == 403
    for name in ("review:reviewer_exclude", "review:reviewer_include"):
        assert client.post(reverse(name, args=[*args, a.pk])).status_code == 403
    adjudicate = reverse("review:uncertain_to_adjudication", args=args)
    assert client.post(adjudicate, {"threshold": "1"}).status_code == 403
    assert not ReviewerExclusion.objects.exists()
    assert Sample.objects.get(dataset=dataset).status == SampleStatus.VERIFIED


def test_the_lead_excludes_and_counts_again(lead: Any) -> None:
    """Excluding a sends the sample back to review and says so; counting again settles it."""
    dataset, a, _b = _reviewed(1)
    client = _client(lead)
    response = client.post(
        reverse("review:reviewer_exclude", args=[dataset.pk, a.pk]), {"reason": "gold"}
    )
    assert response.status_code == 302
    assert "1 back to review" in " ".join(_messages(response))
    assert ReviewerExclusion.objects.get().reason == "gold"
    assert Sample.objects.get(dataset=dataset).status == SampleStatus.IN_REVIEW
    page = client.get(reverse("review:consensus_quality", args=[dataset.pk]))
    assert b"Count again" in page.content
    client.post(reverse("review:reviewer_include", args=[dataset.pk, a.pk]))
    assert Sample.objects.get(dataset=dataset).status == SampleStatus.VERIFIED


def test_bad_requests_get_a_message(lead: Any) -> None:
    """An unknown user is a 404; a second exclusion and a bad threshold get a message and
    change nothing."""
    dataset, a, _b = _reviewed(1)
    client = _client(lead)
    assert (
        client.post(reverse("review:reviewer_exclude", args=[dataset.pk, 10**9])).status_code == 404
    )
    url = reverse("review:reviewer_exclude", args=[dataset.pk, a.pk])
    client.post(url)
    again = client.post(url)
    assert "already excluded" in " ".join(_messages(again))
    page = client.get(reverse("review:consensus_quality", args=[dataset.pk]), {"threshold": "x"})
    assert page.status_code == 200
    assert "between 0.34 and 1" in " ".join(_messages(page))
    send = client.post(
        reverse("review:uncertain_to_adjudication", args=[dataset.pk]), {"threshold": "7"}
    )
    assert "between 0.34 and 1" in " ".join(_messages(send))
    assert ReviewerExclusion.objects.count() == 1


def test_the_page_shows_the_estimate(lead: Any) -> None:
    """Each reviewer's confusion matrix and the uncertain samples, as the selector has them."""
    dataset, a, _b = _reviewed(3, disagree=True)
    page = _client(lead).get(reverse("review:consensus_quality", args=[dataset.pk]))
    estimate = consensus_selectors.consensus_estimate(dataset=dataset)
    assert estimate is not None
    html = page.content.decode()
    assert f'data-reviewer="{a.username}"' in html
    first = estimate.reviewers[0][1][0][1][0]
    assert f"{first:.2f}" in html
    assert len(estimate.uncertain) == 3 and 'data-testid="send-uncertain"' in html


def test_uncertain_samples_go_to_adjudication_in_bulk(lead: Any) -> None:
    """The button sends every uncertain sample at the posted threshold to adjudication."""
    dataset, _a, _b = _reviewed(2)
    response = _client(lead).post(
        reverse("review:uncertain_to_adjudication", args=[dataset.pk]), {"threshold": "1"}
    )
    assert "2 samples sent to adjudication" in " ".join(_messages(response))
    statuses = set(Sample.objects.filter(dataset=dataset).values_list("status", flat=True))
    assert statuses == {SampleStatus.NEEDS_ADJUDICATION}


def test_the_page_runs_a_fixed_number_of_queries(lead: Any) -> None:
    """2 or 8 reviewed samples, one excluded reviewer: the same queries."""
    counts = []
    for size in (2, 8):
        dataset, a, _b = _reviewed(size)
        ReviewerExclusion.objects.create(dataset=dataset, reviewer=a, excluded_by=lead)
        client = _client(lead)
        with CaptureQueriesContext(connection) as queries:
            assert (
                client.get(reverse("review:consensus_quality", args=[dataset.pk])).status_code
                == 200
            )
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_the_adjudication_list_marks_reviews_of_flagged_reviewers(lead: Any) -> None:
    """A flagged reviewer's review carries the mark; the other's does not."""
    dataset, a, b = _reviewed(1, disagree=True)
    blind_settings(dataset, min_gold_items=2)
    answer_gold(dataset, a, [False, False])
    html = _client(lead).get(reverse("review:adjudication_list", args=[dataset.pk])).content
    text = html.decode()
    assert f"{a.username}: Accept · flagged" in text
    assert f"{b.username}: Reject (Invalid) · flagged" not in text
