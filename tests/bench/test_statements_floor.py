"""The bench's statements floor (bench/statements_floor.py) sends the real review loop's
statements: the same SQL, in the same order, as the token-authenticated claim and submit API,
and it writes what they write."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from annotation.models import Sample, SampleStatus
from review.models import Outcome, Review
from tests.annotation.factories import UserFactory
from tests.review.factories import review_dataset

pytestmark = pytest.mark.django_db

_VARYING = (  # what differs between two loops: times, ids, keys, the seconds spent
    (re.compile(r"'[0-9]{4}-[0-9-]+ [0-9:.+]+'::timestamptz"), "TIME"),
    (re.compile(r"'[0-9a-f]{32}'::uuid"), "UUID"),
    (re.compile(r"'[0-9a-f]{40}'"), "KEY"),
    (re.compile(r"\b\d+(\.\d+)?\b"), "N"),
)


def _shape(queries: list[dict[str, str]]) -> list[str]:
    """The statements with their varying values masked, savepoints (the test transaction's
    around the site's claim) left out."""
    shapes = []
    for query in queries:
        sql = query["sql"]
        if sql.startswith(("SAVEPOINT", "RELEASE SAVEPOINT")):
            continue
        for pattern, mask in _VARYING:
            sql = pattern.sub(mask, sql)
        shapes.append(sql)
    return shapes


def _loops(claim: str, submit: str, tokens: list[str]) -> list[list[str]]:
    """Each reviewer claims and submits in turn; the statements of every call."""
    calls = []
    for token in tokens:
        client = Client(HTTP_AUTHORIZATION=f"Token {token}")
        with CaptureQueriesContext(connection) as claimed_q:
            claimed = client.post(claim, {}, content_type="application/json")
        assert claimed.status_code == 200, claimed.content
        body = {
            "client_uuid": str(uuid.uuid4()),
            "sample": claimed.json()["sample"]["id"],
            "decision": "accept",
            "seconds_spent": 3,
        }
        with CaptureQueriesContext(connection) as submitted_q:
            submitted = client.post(submit, body, content_type="application/json")
        assert submitted.status_code == 201, submitted.content
        calls += [_shape(claimed_q.captured_queries), _shape(submitted_q.captured_queries)]
    return calls


def test_the_statements_floor_sends_the_real_loops_statements(settings: Any) -> None:
    """Two reviewers each claim and review one sample (k = 2), through the API and then
    through the statements floor on a twin dataset: the claim, the first review and the
    settling review send the same statements, and both leave the sample verified with its two
    reviews and its outcome."""
    reviewers = [UserFactory.create(role="annotator") for _ in range(2)]
    tokens = [Token.objects.create(user=user).key for user in reviewers]
    real, floor = (review_dataset(1, k=2, members=reviewers) for _ in range(2))
    site_calls = _loops(f"/api/datasets/{real.pk}/claim/", "/api/reviews/", tokens)
    settings.ROOT_URLCONF = "bench.floor_urls"  # as bench/floor_site.py sets it
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if "LoginRequired" not in m]
    floor_calls = _loops(
        f"/floor/statements/claim/{floor.pk}/", "/floor/statements/submit/", tokens
    )
    # Claim, first review, claim, settling review (the submit's transaction is a savepoint
    # pair inside the test's, left out like the claim's).
    assert [len(statements) for statements in site_calls] == [2, 3, 2, 4]
    assert floor_calls == site_calls
    for dataset in (real, floor):
        sample = Sample.objects.get(dataset=dataset)
        assert sample.status == SampleStatus.VERIFIED
        assert Review.objects.filter(sample=sample).count() == 2
        assert Outcome.objects.get(sample=sample).status == SampleStatus.VERIFIED
