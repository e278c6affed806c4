"""Tests for judging.judge_views and judging.judge_apis: leads edit, disable, delete (only
without verdicts) and test judges; nobody else may; the judges page's queries stay constant."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import JobStatus
from judging.models import Judge, JudgeCheck, Verdict
from judging.services import checks
from tests.annotation.factories import mmooc_dataset
from tests.conftest import client_for
from tests.judging.factories import bulk_samples, fake_judge, rule_judge

pytestmark = pytest.mark.django_db


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_lead_edits_disables_enables_and_deletes_a_judge(lead: Any) -> None:
    judge = fake_judge("https://judge.invalid/v1", name="gpt")
    client = login(lead)
    page = client.get(reverse("judging:judge_edit", args=[judge.pk]))
    assert page.status_code == 200 and 'name="name"' not in page.content.decode()
    form = {
        "kind": "openai",
        "base_url": "https://judge.invalid/v1",
        "model": "gpt-4o",
        "api_key_env": "JUDGE_KEY_GPT",
        "temperature": "0",
        "timeout_s": "20",
        "max_concurrency": "4",
        "family": "gpt",
        "prompt_version": "v1",
        "enabled": "on",
    }
    saved = client.post(reverse("judging:judge_edit", args=[judge.pk]), form)
    assert saved.status_code == 302
    judge.refresh_from_db()
    assert (judge.model, judge.max_concurrency, judge.name) == ("gpt-4o", 4, "gpt")
    bad = client.post(
        reverse("judging:judge_edit", args=[judge.pk]), {**form, "api_key_env": "SECRET_KEY"}
    )
    assert bad.status_code == 400 and "JUDGE_KEY_SECRET_KEY" in bad.content.decode()

    client.post(reverse("judging:judge_enable", args=[judge.pk]))
    judge.refresh_from_db()
    assert not judge.enabled
    listing = client.get(reverse("judging:judge_list")).content.decode()
    assert "disabled" in listing and "Enable" in listing
    client.post(reverse("judging:judge_enable", args=[judge.pk]))
    judge.refresh_from_db()
    assert judge.enabled

    client.post(reverse("judging:judge_delete", args=[judge.pk]))
    assert not Judge.objects.filter(pk=judge.pk).exists()


def test_a_judge_with_verdicts_cannot_be_deleted_only_disabled(lead: Any) -> None:
    dataset = mmooc_dataset()
    (sample,) = bulk_samples(dataset, 1)
    judge = fake_judge("https://judge.invalid/v1", name="voter")
    Verdict.objects.create(
        judge=judge, task="answerability", prompt_version="v1", sample=sample, label="answerable"
    )
    client = login(lead)
    listing = client.get(reverse("judging:judge_list")).content.decode()
    assert "has verdicts" in listing
    reply = client.post(reverse("judging:judge_delete", args=[judge.pk]), follow=True)
    assert "disable it instead" in reply.content.decode()
    assert Judge.objects.filter(pk=judge.pk).exists()
    api = client_for(lead).delete(reverse("api_judge", args=[judge.pk]))
    assert api.status_code == 400 and "disable it instead" in api.content.decode()
    built_in = client_for(lead).delete(reverse("api_judge", args=[rule_judge().pk]))
    assert built_in.status_code == 409 and Judge.objects.filter(kind="rule").exists()


def test_the_test_button_queues_a_check_whose_outcome_the_page_shows(
    lead: Any, fake_openai: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = login(lead)
    with fake_openai(known_models={"fake-judge"}) as server:
        judge = fake_judge(server.base_url, name="fake", model="gpt-nope")
        with django_capture_on_commit_callbacks(execute=True):
            reply = client.post(reverse("judging:judge_test", args=[judge.pk]))
        assert reply.status_code == 302 and reply["Location"].endswith(f"#judge-{judge.pk}")
    page = client.get(reverse("judging:judge_list")).content.decode()
    assert "Unknown model" in page and "gpt-nope" in page
    assert JudgeCheck.objects.get(judge=judge).status == JobStatus.SUCCEEDED


def test_judge_tests_through_the_api_answer_202_and_their_outcome_can_be_read(
    lead: Any, annotator: Any, fake_openai: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with fake_openai() as server:
        judge = fake_judge(server.base_url)
        url = reverse("api_judge_test", args=[judge.pk])
        assert client_for(annotator).post(url).status_code == 403
        with django_capture_on_commit_callbacks(execute=True):
            reply = client_for(lead).post(url)
    assert reply.status_code == 202 and reply.json()["status"] == "queued"
    check = client_for(lead).get(reply.json()["url"]).json()
    assert check["finished"] and check["ok"] and check["latency_ms"] is not None
    assert "answer_score" in check["reply"]
    refused = client_for(lead).post(reverse("api_judge_test", args=[rule_judge().pk]))
    assert refused.status_code == 409  # the rule judge makes no calls


def test_only_leads_change_judges(annotator: Any, auditor: Any) -> None:
    judge = fake_judge("https://judge.invalid/v1")
    for user in (annotator, auditor):
        client = login(user)
        for name in ("judge_edit", "judge_enable", "judge_delete", "judge_test"):
            assert client.post(reverse(f"judging:{name}", args=[judge.pk])).status_code == 403
    assert Judge.objects.filter(pk=judge.pk, enabled=True).exists()
    assert not JudgeCheck.objects.exists()


def test_the_judges_page_takes_constant_queries(
    lead: Any, django_assert_num_queries: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With their latest tests, one judge or six cost the same queries."""
    monkeypatch.setattr("judging.services.checks._enqueue", lambda pk: None)
    client = login(lead)
    url = reverse("judging:judge_list")
    for n in range(6):
        judge = fake_judge("https://judge.invalid/v1", name=f"j{n}")
        checks.judge_check_create(judge=judge)
        checks.judge_check_create(judge=judge)
    client.get(url)
    # session, user, roles, judges with their latest test's id, those tests
    with django_assert_num_queries(5):
        client.get(url)


def test_the_built_in_rule_judge_is_offered_no_delete(lead: Any) -> None:
    """The rule judge's row says it is built in and has no Delete button (deleting it is
    refused anyway); another judge without verdicts has one, styled as destructive."""
    from tests.judging.factories import JudgeFactory

    rule = rule_judge()
    other = JudgeFactory.create(base_url="http://127.0.0.1:9/v1")
    browser = Client()
    browser.force_login(lead)
    page = browser.get(reverse("judging:judge_list")).content.decode()
    assert reverse("judging:judge_delete", args=[rule.pk]) not in page
    assert 'data-testid="built-in"' in page
    other_form = page[page.index(reverse("judging:judge_delete", args=[other.pk])) :]
    assert '<button type="submit" class="danger">' in other_form[:400]


def test_destructive_buttons_have_their_own_style() -> None:
    """The .danger class that delete and revoke buttons carry is styled apart from the
    primary buttons (it once had no rule, so they looked like the main action)."""
    from pathlib import Path

    css = (Path(__file__).resolve().parents[2] / "static" / "css" / "site.css").read_text()
    assert "button.danger" in css
    for template in ("annotation/dataset_delete.html", "accounts/api_token.html"):
        path = Path(__file__).resolve().parents[2] / "templates" / template
        assert 'class="danger"' in path.read_text(), template
