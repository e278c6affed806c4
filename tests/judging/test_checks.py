"""Tests for judging.services.checks and judging.calls.probe: a judge's test call against the fake
OpenAI server, each kind of failure named exactly, and a job that does not start when one of
its judges cannot answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from annotation.models import JobStatus
from judging import services
from judging.calls.probe import ProbeError
from judging.models import JudgeCheck, Verdict
from judging.services import checks
from tests.annotation.factories import mmooc_dataset
from tests.judging.factories import bulk_responses, bulk_samples, fake_judge, rule_judge
from tests.support.processes import free_port

pytestmark = pytest.mark.django_db


def run_check(judge: Any, capture: Any) -> JudgeCheck:
    """Queue a test and run it as a worker would (tasks run eagerly on commit here)."""
    with capture(execute=True):
        check = checks.judge_check_create(judge=judge)
    check.refresh_from_db()
    return check


def test_a_working_judge_answers_with_its_latency_and_parsed_reply(
    fake_openai: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with fake_openai(latency=0.05) as server:
        check = run_check(fake_judge(server.base_url), django_capture_on_commit_callbacks)
        (call,) = server.probe_records()
        assert server.chat_records() == []  # a test call is not a judging call
    assert (check.status, check.ok, check.error_kind) == (JobStatus.SUCCEEDED, True, "")
    assert check.latency_ms is not None and check.latency_ms >= 50
    assert set(json.loads(check.reply)) >= {"answer_score", "reasoning_score", "reason"}
    assert call.body is not None and call.body["model"] == "fake-judge"


@pytest.mark.parametrize(
    ("setup", "kind", "words"),
    [
        ("key_missing", ProbeError.KEY_MISSING, "JUDGE_KEY_NOT_SET"),
        ("unreachable", ProbeError.UNREACHABLE, "Connect"),
        ("error_500", ProbeError.HTTP_ERROR, "HTTP 500: fake server error"),
        ("unknown_model", ProbeError.UNKNOWN_MODEL, "HTTP 404: The model `gpt-nope`"),
        ("refused", ProbeError.REFUSED, "JUDGE_ALLOWED_HOSTS"),
        ("malformed", ProbeError.MALFORMED, ""),
        ("hang", ProbeError.TIMEOUT, "Timeout"),
    ],
)
def test_each_failure_is_named_with_its_exact_reason(
    fake_openai: Any,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
    setup: str,
    kind: str,
    words: str,
) -> None:
    monkeypatch.delenv("JUDGE_KEY_NOT_SET", raising=False)
    fault = setup if setup in {"error_500", "malformed", "hang"} else None
    with fake_openai(probe_fault=fault, known_models={"fake-judge"}, hang_s=5) as server:
        judge = fake_judge(server.base_url, timeout_s=0.5)
        if setup == "key_missing":
            judge.api_key_env = "JUDGE_KEY_NOT_SET"
        elif setup == "unreachable":
            port = free_port()
            settings.JUDGE_ALLOWED_HOSTS = [f"127.0.0.1:{port}"]
            judge.base_url = f"http://127.0.0.1:{port}/v1"
        elif setup == "unknown_model":
            judge.model = "gpt-nope"
        elif setup == "refused":
            settings.JUDGE_ALLOWED_HOSTS = []
        judge.save()
        check = run_check(judge, django_capture_on_commit_callbacks)
    assert (check.ok, check.error_kind) == (False, kind), check.error
    assert words in check.error
    assert checks.error_label(check)


def test_only_endpoint_judges_are_tested() -> None:
    with pytest.raises(ValidationError, match="Only endpoint judges"):
        checks.judge_check_create(judge=rule_judge())


def test_a_job_does_not_start_when_a_judge_cannot_answer_and_says_which_and_why(
    fake_openai: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """Both judges are checked before any item is sent; the job fails naming the judge that
    serves no such model, and its good judge made no judging call either."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 3), ["m"])
    with fake_openai(known_models={"fake-judge"}) as server:
        good = fake_judge(server.base_url, name="good")
        bad = fake_judge(server.base_url, name="bad", model="gpt-nope")
        with django_capture_on_commit_callbacks(execute=True):
            job = services.judge_job_start(dataset=dataset, task="scoring", judges=[good, bad])
        job.refresh_from_db()
        assert server.chat_records() == [] and len(server.probe_records()) == 2
        assert job.status == JobStatus.FAILED
        assert "did not start" in job.message and "bad" in job.message
        assert "Unknown model" in job.message and "gpt-nope" in job.message
        assert "good cannot" not in job.message
        assert not Verdict.objects.exists()

        services.judge_update(judge=bad, changes={"model": "fake-judge"})
        with django_capture_on_commit_callbacks(execute=True):
            services.judge_job_retry(job=job)
        job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert Verdict.objects.filter(job=job, error_kind="").count() == 2 * 3


def test_a_job_whose_judges_answer_starts_after_a_transient_failure_of_the_check(
    fake_openai: Any, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 500 says little about the next call: the job's check tries again before refusing."""
    monkeypatch.setattr(checks, "PREFLIGHT_PAUSE_S", 0.01)
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 2), ["m"])
    with fake_openai() as server:
        server.probe_fault = "error_500"
        judge = fake_judge(server.base_url)
        original = checks.probe
        calls = {"n": 0}

        async def flaky_once(target: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == 2:
                server.probe_fault = None
            return await original(target)

        monkeypatch.setattr(checks, "probe", flaky_once)
        with django_capture_on_commit_callbacks(execute=True):
            job = services.judge_job_start(dataset=dataset, task="scoring", judges=[judge])
        job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert calls["n"] == 2
