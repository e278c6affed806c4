"""The Reviewers page and its API: who sees which rows, the chart, and fixed query counts (of
figures a worker stored: here computed in the test's process first)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Dataset, Sample, SampleStatus
from core import roles
from review.gold import services as gold
from review.quality.computations import reviewer_quality_compute
from tests.annotation.factories import UserFactory, mmooc_sample
from tests.review.factories import review_dataset, submit
from tests.review.quality.test_selectors import answer_gold, gold_settings

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _reviewed(
    n_reviewers: int, *, with_gold: bool = False, computed: bool = True
) -> tuple[Dataset, list[Any]]:
    """Two samples, each reviewed by every one of ``n_reviewers`` annotators (members), and
    (``computed``) their figures computed and stored."""
    reviewers = [UserFactory.create(role=roles.ANNOTATOR) for _ in range(n_reviewers)]
    dataset = review_dataset(2, k=n_reviewers, members=reviewers)
    if with_gold:
        gold_settings(dataset, n_reviewers)
        item = mmooc_sample(dataset, status=SampleStatus.VERIFIED)
        gold.gold_mark(sample=Sample.objects.select_related("dataset").get(pk=item.pk), by=None)
        answer_gold(reviewers[0], dataset)
    for sample in Sample.objects.filter(dataset=dataset, status=SampleStatus.PENDING_REVIEW):
        for reviewer in reviewers:
            submit(reviewer, sample, seconds_spent=12)
    if computed:
        reviewer_quality_compute(dataset=dataset)
    return dataset, reviewers


def _page(dataset: Dataset) -> str:
    return reverse("review:reviewers", args=[dataset.pk])


def _api(dataset: Dataset) -> str:
    return reverse("api_review_reviewers", args=[dataset.pk])


def test_a_lead_sees_every_reviewer_and_the_accuracy_chart(lead: Any) -> None:
    dataset, reviewers = _reviewed(2, with_gold=True)
    response = _client(lead).get(_page(dataset))
    html = response.content.decode()
    assert response.status_code == 200
    for reviewer in reviewers:
        assert f'data-reviewer="{reviewer.username}"' in html
    assert 'class="card accuracy-volume"' in html and "<circle" in html
    data = _client(lead).get(_api(dataset)).json()
    assert data["everyone"] is True
    assert [r["username"] for r in data["reviewers"]] == sorted(r.username for r in reviewers)
    first = next(r for r in data["reviewers"] if r["username"] == reviewers[0].username)
    assert first["gold_accuracy"] | {"low": None, "high": None} == {
        "value": 1.0,
        "low": None,
        "high": None,
        "n": 1,
    }
    assert [f["field"] for f in first["by_field"]] == [
        "decision",
        "answerability_group",
        "category_code",
        "scenario",
    ]
    kappa = first["by_field"][0]["kappas"][0]
    assert kappa["co_reviewer"] == reviewers[1].username and kappa["kappa"]["n"] == 2


def test_a_reviewer_sees_only_their_own_figures() -> None:
    dataset, (mine, other) = _reviewed(2)
    html = _client(mine).get(_page(dataset)).content.decode()
    assert f'data-reviewer="{mine.username}"' in html
    assert other.username not in html
    assert 'data-testid="own-figures"' in html
    data = _client(mine).get(_api(dataset)).json()
    assert data["everyone"] is False
    assert [r["username"] for r in data["reviewers"]] == [mine.username]
    assert other.username not in str(data)


def test_someone_outside_the_dataset_gets_a_404(annotator: Any) -> None:
    dataset, _reviewers = _reviewed(1)
    client = _client(annotator)
    assert client.get(_page(dataset)).status_code == 404
    assert client.get(_api(dataset)).status_code == 404


def test_an_anonymous_visitor_is_sent_to_sign_in() -> None:
    dataset, _reviewers = _reviewed(1)
    assert Client().get(_page(dataset)).status_code == 302
    assert Client().get(_api(dataset)).status_code in (401, 403)


def test_the_progress_page_links_to_the_reviewers_page(lead: Any) -> None:
    dataset, _reviewers = _reviewed(1)
    html = _client(lead).get(reverse("review:progress", args=[dataset.pk])).content.decode()
    assert _page(dataset) in html


def test_the_progress_page_shows_a_reviewer_only_their_own_row(lead: Any) -> None:
    """As on the Reviewers page, an annotator's Progress page names no co-reviewer and shows
    none of their counts; a lead's lists every reviewer."""
    dataset, reviewers = _reviewed(3)
    url = reverse("review:progress", args=[dataset.pk])
    mine = _client(reviewers[0]).get(url).content.decode()
    assert reviewers[0].username in mine and 'id="own-row-only"' in mine
    assert not any(other.username in mine for other in reviewers[1:])
    everyone = _client(lead).get(url).content.decode()
    assert all(r.username in everyone for r in reviewers)
    assert 'id="own-row-only"' not in everyone


def _queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize("url", [_page, _api])
def test_page_and_api_cost_the_same_queries_for_two_or_five_reviewers(lead: Any, url: Any) -> None:
    counts = []
    for n in (2, 5):
        dataset, _reviewers = _reviewed(n)
        counts.append(_queries(_client(lead), url(dataset)))
    assert counts[0] == counts[1], counts
