"""Tests for judging.apis: permissions, shapes and query counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from annotation import services as annotation_services
from judging import services
from judging.models import Judge, JudgeJob
from tests.annotation.factories import mmooc_dataset
from tests.conftest import client_for
from tests.judging.factories import bulk_responses, bulk_samples, jsonl, rule_judge
from tests.judging.test_views import _running_job_with_an_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored(django_capture_on_commit_callbacks: Any) -> Any:
    """A dataset with two models' responses scored by the rule judge."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 6), ["m1", "m2"])
    with django_capture_on_commit_callbacks(execute=True):
        services.judge_job_start(dataset=dataset, task="scoring", judges=[rule_judge()])
    return dataset


def test_only_leads_configure_judges_and_keys_are_never_returned(
    lead: Any, annotator: Any, auditor: Any
) -> None:
    """Annotators and auditors get 403; a lead's judge shows the key's variable only."""
    url = reverse("api_judges")
    payload = {
        "name": "gpt-4o",
        "base_url": "https://judge.invalid/v1",
        "model": "gpt-4o",
        "api_key_env": "JUDGE_KEY_OPENAI",
        "max_concurrency": 16,
    }
    for user in (annotator, auditor):
        assert client_for(user).post(url, payload, format="json").status_code == 403
        assert client_for(user).get(url).status_code == 403
    reply = client_for(lead).post(url, payload, format="json")
    assert reply.status_code == 201
    assert reply.json()["api_key_env"] == "JUDGE_KEY_OPENAI"
    assert "api_key" not in reply.json()
    bad = client_for(lead).post(url, {**payload, "name": "x", "api_key_env": "sk-123"})
    assert bad.status_code == 400 and "api_key_env" in bad.json()
    judge = Judge.objects.get(name="gpt-4o")
    patch = client_for(lead).patch(
        reverse("api_judge", args=[judge.pk]), {"temperature": 5}, format="json"
    )
    assert patch.status_code == 400


def test_judges_reading_other_secrets_or_calling_internal_addresses_are_refused(
    lead: Any, settings: Any
) -> None:
    """POST and PATCH refuse a key variable without the JUDGE_KEY_ prefix (SECRET_KEY,
    DATABASE_URL) and base URLs on loopback, private or metadata addresses, with messages;
    a host:port listed in JUDGE_ALLOWED_HOSTS is accepted."""
    url = reverse("api_judges")
    client = client_for(lead)
    base = {"name": "j", "base_url": "https://judge.invalid/v1", "model": "m"}
    for variable in ("SECRET_KEY", "DATABASE_URL"):
        reply = client.post(url, {**base, "api_key_env": variable}, format="json")
        assert reply.status_code == 400
        assert f"JUDGE_KEY_{variable}" in reply.json()["api_key_env"][0]
    for address in ("http://127.0.0.1:6379/v1", "http://[::1]:5432/v1", "http://169.254.169.254"):
        reply = client.post(url, {**base, "base_url": address}, format="json")
        assert reply.status_code == 400
        assert "JUDGE_ALLOWED_HOSTS" in reply.json()["base_url"][0]
    assert not Judge.objects.filter(name="j").exists()
    settings.JUDGE_ALLOWED_HOSTS = ["127.0.0.1:11434"]
    local = {**base, "base_url": "http://127.0.0.1:11434/v1"}
    assert client.post(url, local, format="json").status_code == 201
    judge = Judge.objects.get(name="j")
    patch_url = reverse("api_judge", args=[judge.pk])
    reply = client.patch(patch_url, {"api_key_env": "SECRET_KEY"}, format="json")
    assert reply.status_code == 400 and "api_key_env" in reply.json()
    reply = client.patch(patch_url, {"base_url": "http://10.0.0.5:8000/v1"}, format="json")
    assert reply.status_code == 400 and "private" in reply.json()["base_url"][0]
    judge.refresh_from_db()
    assert (judge.api_key_env, judge.base_url) == ("", "http://127.0.0.1:11434/v1")


def test_leads_start_and_cancel_jobs_others_may_only_watch(
    lead: Any, annotator: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """A member annotator sees the job's progress but may neither start nor cancel one."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 3)
    annotation_services.dataset_add_member(dataset=dataset, user=annotator)
    url = reverse("api_judge_jobs", args=[dataset.pk])
    body = {"task": "answerability", "judges": ["rule"]}
    assert client_for(annotator).post(url, body, format="json").status_code == 403
    unknown = client_for(lead).post(url, {**body, "judges": ["nobody"]}, format="json")
    assert unknown.status_code == 404 and "nobody" in str(unknown.json())
    with django_capture_on_commit_callbacks(execute=True):
        reply = client_for(lead).post(url, body, format="json")
    assert reply.status_code == 202
    assert reply["Location"] == f"/api/judge-jobs/{reply.json()['id']}/"
    job = JudgeJob.objects.get(pk=reply.json()["id"])
    progress = client_for(annotator).get(reverse("api_judge_job", args=[job.pk]))
    assert progress.status_code == 200
    assert progress.json()["status"] == "succeeded" and progress.json()["done"] == 3
    cancel = reverse("api_judge_job_cancel", args=[job.pk])
    assert client_for(annotator).post(cancel).status_code == 403
    assert client_for(lead).post(cancel).status_code == 409  # already finished


def test_the_job_list_and_progress_take_a_fixed_number_of_queries(
    lead: Any, django_assert_num_queries: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """Listing jobs and polling progress cost the same few queries however many jobs exist."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 3)
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            job = services.judge_job_start(
                dataset=dataset, task="answerability", judges=[rule_judge()]
            )
    client = client_for(lead)
    client.get(reverse("api_judge_jobs", args=[dataset.pk]))
    # dataset, jobs, their judges, their failed calls (roles cached on the user)
    with django_assert_num_queries(4):
        reply = client.get(reverse("api_judge_jobs", args=[dataset.pk]))
    assert len(reply.json()) == 3 and reply.json()[0]["judges"][0]["name"] == "rule"
    # job with its judges (2), verdict totals, failed calls by judge and kind, chunks, the
    # latest errors (roles cached on the user)
    with django_assert_num_queries(6):
        client.get(reverse("api_judge_job", args=[job.pk]))


def test_the_leaderboard_is_open_to_members_only_in_constant_queries(
    scored: Any, annotator: Any, auditor: Any, django_assert_num_queries: Any
) -> None:
    """Members (auditors included) see the leaderboard with n per cell; others get 404."""
    url = reverse("api_leaderboard", args=[scored.pk])
    assert client_for(auditor).get(url).status_code == 404
    annotation_services.dataset_add_member(dataset=scored, user=auditor)
    client = client_for(auditor)
    client.get(url)
    # the visible dataset, its taxonomy's groups, the kept aggregates' computation (with its
    # prompt versions and pending changes) and their cells
    with django_assert_num_queries(4):
        reply = client.get(url)
    board = reply.json()
    assert reply.status_code == 200 and board["judges"] == ["rule"]
    model = board["models"][0]
    assert set(model["ensemble"]["groups"]) == {"shifted_ic", "ooc"}
    assert model["ensemble"]["overall"]["n"] == 6
    assert "category" in model["ensemble"]["breakdowns"]["ooc"]


def test_imports_through_the_api_answer_202_with_the_job_and_record_rejections(
    lead: Any, annotator: Any, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    """Responses and verdicts upload as files and run as import jobs: the API answers 202
    with the job at once; bad rows are kept on the job with their line."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 1)
    responses = jsonl(tmp_path / "r.jsonl", [{"id": "bulk-0", "response": "A"}, {"id": "x"}])
    url = reverse("api_response_import", args=[dataset.pk])
    with responses.open("rb") as handle:
        refused = client_for(annotator).post(url, {"file": handle, "format": "jsonl"})
    assert refused.status_code == 403
    with responses.open("rb") as handle, django_capture_on_commit_callbacks(execute=True):
        reply = client_for(lead).post(
            url, {"file": handle, "format": "jsonl", "model": "m"}, format="multipart"
        )
    assert reply.status_code == 202, reply.content
    body = reply.json()
    assert body["status"] == "queued" and body["page_url"] == f"/imports/{body['id']}/"
    job = client_for(lead).get(reverse("api_import_job", args=[body["id"]])).json()
    assert job["status"] == "succeeded_with_errors"
    assert (job["imported"], job["rejected"]) == (1, 1)
    assert job["row_errors"][0]["row"] == 2
    verdicts = jsonl(tmp_path / "v.jsonl", [{"sample_id": "bulk-0", "judge": "o3", "label": "?"}])
    with verdicts.open("rb") as handle, django_capture_on_commit_callbacks(execute=True):
        reply = client_for(lead).post(
            reverse("api_verdict_import", args=[dataset.pk]), {"file": handle}, format="multipart"
        )
    assert reply.status_code == 202
    job = client_for(lead).get(reverse("api_import_job", args=[reply.json()["id"]])).json()
    assert job["status"] == "failed"
    assert job["row_errors"][0]["message"].startswith("line 1")
    missing = client_for(lead).post(url, {"format": "jsonl"}, format="multipart")
    assert missing.status_code == 400
    for structure in ('{"name": "m"}', '["m"]'):
        with responses.open("rb") as handle:
            wrong = client_for(lead).post(
                url, {"file": handle, "format": "jsonl", "model": structure}, format="multipart"
            )
        assert wrong.status_code == 400 and "model" in wrong.json(), structure
    listed = client_for(lead).get(
        reverse("api_dataset_imports", args=[dataset.pk]), {"kind": "responses"}
    )
    assert [job["kind"] for job in listed.json()["results"]] == ["responses"]
    samples = client_for(lead).get(reverse("api_dataset_imports", args=[dataset.pk]))
    assert samples.json()["results"] == []


def test_the_job_list_counts_failed_calls_per_judge_and_kind(lead: Any) -> None:
    """Each job of the API's list carries its failed calls by judge and kind."""
    job = _running_job_with_an_error()
    reply = client_for(lead).get(reverse("api_judge_jobs", args=[job.dataset_id]))
    assert reply.json()[0]["error_counts"] == {"flaky": {"timeout": 1}}
    progress = client_for(lead).get(reverse("api_judge_job", args=[job.pk])).json()
    assert progress["error_counts"] == [{"judge": "flaky", "kind": "timeout", "n": 1}]
    assert progress["recent_errors"][0]["kind"] == "timeout" and not progress["finished"]
