"""The audit API: who may call it, the shapes it returns, and figures equal to judging.stats'."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.urls import reverse

from core import roles
from judging.audit import report as audit_report
from judging.audit import selectors as audit_selectors
from judging.audit import statistics
from judging.models import AuditItem, AuditRating, AuditSet
from judging.stats.human_judge import human_judge_report
from tests.annotation.factories import UserFactory
from tests.conftest import client_for
from tests.judging import audit_factories as af

pytestmark = pytest.mark.django_db


def _claim(user: Any, audit_set: AuditSet) -> Any:
    return client_for(user).post(reverse("api_audit_claim", args=[audit_set.pk]))


def test_claim_permissions_for_every_role(
    audit_set: AuditSet, lead: Any, auditor: Any, annotator: Any, api_client: Any
) -> None:
    """Leads and member auditors claim; a non-member auditor gets 404, an annotator 403
    (even as a member), an anonymous caller 401."""
    af.add_member(audit_set.dataset, annotator)
    outsider = UserFactory.create(role=roles.AUDITOR)
    assert _claim(lead, audit_set).status_code == 200
    assert _claim(auditor, audit_set).status_code == 200
    assert _claim(outsider, audit_set).status_code == 404
    assert _claim(annotator, audit_set).status_code == 403
    url = reverse("api_audit_claim", args=[audit_set.pk])
    assert api_client.post(url).status_code == 401


def test_claim_returns_the_item_blind_to_the_judges(audit_set: AuditSet, auditor: Any) -> None:
    """The claimed item carries the question, reference, reasoning and response, and nothing
    of the verdicts (no judge name, no rationale)."""
    response = _claim(auditor, audit_set)
    body = response.json()
    assert set(body) == {
        "lease",
        "item",
        "slot",
        "expires_at",
        "resumed",
        "task",
        "question",
        "reference_answer",
        "reasoning",
        "response",
        "media",
        "url",
    }
    assert body["url"] == reverse("judging:audit_rate", args=[body["item"]])
    text = response.content.decode()
    assert "judge" not in text and "rationale" not in text


def test_claim_answers_204_when_nothing_is_left(audit_set: AuditSet, auditor: Any) -> None:
    """Once every slot is rated, the claim has no content."""
    af.rate_all(audit_set, [auditor, UserFactory.create(role=roles.AUDITOR)])
    assert _claim(auditor, audit_set).status_code == 204


def test_rating_is_created_once_per_submission(audit_set: AuditSet, auditor: Any) -> None:
    """201 for a new rating, 200 with the same rating for a replay, 409 for a second rating
    of the same item, 400 with the field for bad values, 404 for an unknown item."""
    item = _claim(auditor, audit_set).json()["item"]
    client = client_for(auditor)
    url = reverse("api_audit_ratings")
    body = {
        "item": item,
        "submission_uuid": str(uuid.uuid4()),
        "answer_score": 1,
        "reasoning_score": 0.5,
        "seconds_spent": 12.5,
    }
    created = client.post(url, body, format="json")
    assert created.status_code == 201
    assert created.json()["reasoning_score"] == 0.5
    replay = client.post(url, body, format="json")
    assert replay.status_code == 200
    assert replay.json()["id"] == created.json()["id"]
    again = client.post(url, {**body, "submission_uuid": str(uuid.uuid4())}, format="json")
    assert again.status_code == 409
    bad = client.post(
        url, {**body, "submission_uuid": str(uuid.uuid4()), "reasoning_score": 0.3}, format="json"
    )
    assert bad.status_code == 400
    assert "reasoning_score" in bad.json()
    missing = client.post(url, {**body, "item": 10**9}, format="json")
    assert missing.status_code == 404
    assert AuditRating.objects.count() == 1


def test_rating_permissions(audit_set: AuditSet, annotator: Any) -> None:
    """An annotator cannot rate (403); a non-member auditor cannot see the item (404)."""
    item = AuditItem.objects.filter(audit_set=audit_set).first()
    assert item is not None
    body = {
        "item": item.pk,
        "submission_uuid": str(uuid.uuid4()),
        "answer_score": 1,
        "reasoning_score": 1,
    }
    url = reverse("api_audit_ratings")
    assert client_for(annotator).post(url, body, format="json").status_code == 403
    outsider = UserFactory.create(role=roles.AUDITOR)
    assert client_for(outsider).post(url, body, format="json").status_code == 404


def test_status_of_an_audit_set_for_its_page(
    audit_set: AuditSet, lead: Any, auditor: Any, annotator: Any
) -> None:
    """The page of a set being drawn follows this status: leads and member auditors read it,
    annotators get 403, outsiders 404."""
    url = reverse("api_audit_set", args=[audit_set.pk])
    assert client_for(annotator).get(url).status_code == 403
    assert client_for(UserFactory.create(role=roles.AUDITOR)).get(url).status_code == 404
    assert client_for(lead).get(url).status_code == 200
    body = client_for(auditor).get(url).json()
    assert body == {
        "id": audit_set.pk,
        "name": audit_set.name,
        "status": "succeeded",
        "status_label": "Succeeded",
        "message": audit_set.message,
        "attempts": audit_set.attempts,
    }


def test_statistics_permissions_and_shape(
    audit_set: AuditSet, lead: Any, auditor: Any, annotator: Any
) -> None:
    """Leads and member auditors read the statistics; annotators 403, outsiders 404."""
    af.rate_all(audit_set, [auditor, lead])
    url = reverse("api_audit_statistics", args=[audit_set.pk])
    assert client_for(annotator).get(url).status_code == 403
    assert client_for(UserFactory.create(role=roles.AUDITOR)).get(url).status_code == 404
    body = client_for(auditor).get(url).json()
    assert client_for(lead).get(url).status_code == 200
    assert body["n_items"] == 12 and body["n_rated"] == 12 and body["n_double_rated"] == 3
    assert [b["target"] for b in body["human_judge"]] == ["answer_score", "reasoning_score"]
    assert [(b["target"], b["level"]) for b in body["inter_judge"]] == [
        ("answer_score", "nominal"),
        ("reasoning_score", "nominal"),
        ("reasoning_score", "ordinal"),
        ("reasoning_score", "interval"),
    ]
    figure = body["human_judge"][0]["overall"][0]["percent_agreement"]
    assert set(figure) == {"value", "ci_low", "ci_high", "n", "too_small"}
    assert figure["too_small"] is True  # 12 items < 30
    assert {c["model"] for c in body["corrected"]} == {"gpt-4o", "qwen3-vl"}


def test_statistics_equal_judging_stats_for_a_seeded_scenario(auditor: Any) -> None:
    """The API's human-vs-judge figures are judging.stats' own output on the audit's arrays."""
    dataset, _ = af.scoring_dataset(n_samples=40, seed=3)
    af.add_member(dataset, auditor)
    audit_set = af.draw(dataset, size=40, floor=2, oversample_rare=2, seed=5)
    af.rate_all(audit_set, [auditor, UserFactory.create()], seed=9)
    body = client_for(auditor).get(reverse("api_audit_statistics", args=[audit_set.pk])).json()
    data = audit_selectors.audit_gather(audit_set)
    shares = audit_set.frame["population_shares"]
    rated = audit_report.rated_arrays(data, shares)
    target = audit_report.TARGETS["scoring"][1]
    report = human_judge_report(
        **audit_report.human_judge_inputs(data, target, rated),
        n_replicates=statistics.N_REPLICATES,
        seed=audit_set.seed,
    )
    shown = {c["rater"]: c for c in body["human_judge"][1]["overall"]}
    for rater, comparison in report.overall.items():
        assert shown[rater]["cohen_kappa"]["value"] == pytest.approx(comparison.cohen_kappa.value)
        assert shown[rater]["cohen_kappa"]["ci_low"] == pytest.approx(comparison.cohen_kappa.ci_low)
        difference = comparison.mean_signed_difference
        assert difference is not None
        assert shown[rater]["mean_signed_difference"]["value"] == pytest.approx(difference.value)
        assert shown[rater]["n"] == comparison.n


def test_only_auditors_rate_and_one_user_may_hold_both_roles(
    audit_set: AuditSet, annotator: Any
) -> None:
    """A member annotator cannot rate (403); a member who is annotator and auditor can."""
    af.add_member(audit_set.dataset, annotator)
    item = AuditItem.objects.filter(audit_set=audit_set).order_by("position").first()
    assert item is not None
    body = {"item": item.pk, "submission_uuid": str(uuid.uuid4()), **af.rubric_for("scoring")}
    url = reverse("api_audit_ratings")
    assert client_for(annotator).post(url, body, format="json").status_code == 403
    both = UserFactory.create(role=roles.AUDITOR)
    both.groups.add(*annotator.groups.all())
    af.add_member(audit_set.dataset, both)
    claimed = _claim(both, audit_set)
    assert claimed.status_code == 200
    body["item"] = claimed.json()["item"]
    assert client_for(both).post(url, body, format="json").status_code == 201
