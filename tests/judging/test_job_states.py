"""Judge jobs end in a state that tells the truth (judging.services.jobs.judge_job_end): every
call failed is "failed", some failed is "finished with errors" with counts per judge and kind,
none failed is "succeeded"; a retry makes the failed calls again."""

from __future__ import annotations

from typing import Any

import pytest

from judging import selectors, services
from judging.models import JudgeJobStatus, Verdict
from tests.annotation.factories import mmooc_dataset
from tests.judging.factories import bulk_responses, bulk_samples, fake_judge, run_job

pytestmark = pytest.mark.django_db


def test_a_job_whose_every_call_failed_reads_failed_with_the_counts(
    django_capture_on_commit_callbacks: Any, fake_openai: Any
) -> None:
    """Connection-level failures on every call: "failed", never "succeeded", saying why."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 4), ["m"])
    with fake_openai(fault_rates={"error_500": 1.0}) as server:
        judge = fake_judge(server.base_url, max_attempts=2, backoff_base_s=0.01)
        job = run_job(
            django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[judge]
        )
    assert job.status == JudgeJobStatus.FAILED and job.is_finished
    assert "Every call failed (4)" in job.message and "server_error 4" in job.message
    progress = selectors.job_progress(job=job)
    assert progress.error_counts == [{"judge": judge.name, "kind": "server_error", "n": 4}]
    assert progress.finished and len(progress.recent_errors) == 4


def test_a_judge_without_its_key_variable_fails_the_job(
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch, fake_openai: Any
) -> None:
    """A key variable the workers do not have: the check before the first call finds it, and
    the job reads failed, naming the variable, with no call made and no verdict stored."""
    monkeypatch.delenv("JUDGE_KEY_NOT_SET", raising=False)
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 3), ["m"])
    with fake_openai() as server:
        judge = fake_judge(server.base_url, api_key_env="JUDGE_KEY_NOT_SET")
        job = run_job(
            django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[judge]
        )
        assert server.chat_records() == []
    assert job.status == JudgeJobStatus.FAILED
    assert "JUDGE_KEY_NOT_SET" in job.message
    assert not Verdict.objects.filter(job=job).exists()


def test_some_failed_calls_finish_with_errors_counted_per_judge_and_kind(
    django_capture_on_commit_callbacks: Any, fake_openai: Any
) -> None:
    """One judge answers, the other's calls all fail: "finished with errors", with the failed
    calls per judge and kind on the job and in the job list; a retry makes them again."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 3), ["m1", "m2"])
    with fake_openai() as good, fake_openai(fault_rates={"bad_request": 1.0}) as bad:
        sound = fake_judge(good.base_url, name="sound")
        broken = fake_judge(bad.base_url, name="broken")
        job = run_job(
            django_capture_on_commit_callbacks,
            dataset=dataset,
            task="scoring",
            judges=[sound, broken],
        )
        assert job.status == JudgeJobStatus.WITH_ERRORS
        assert str(job.get_status_display()) == "Finished with errors"
        assert job.message.startswith("6 of 12 calls failed")
        counts = selectors.job_error_counts(job_ids=[job.pk])
        assert counts == {job.pk: {"broken": {"client_error": 6}}}
        bad.fault_rates = {}
        with django_capture_on_commit_callbacks(execute=True):
            services.judge_job_retry(job=job)
    job.refresh_from_db()
    assert job.status == JudgeJobStatus.SUCCEEDED, job.message
    rows = Verdict.objects.filter(judge__in=[sound, broken])
    assert rows.count() == 12 and not rows.exclude(error_kind="").exists()
    assert selectors.job_error_counts(job_ids=[job.pk]) == {}


def test_a_job_without_failed_calls_succeeds(
    django_capture_on_commit_callbacks: Any, fake_openai: Any
) -> None:
    """Calls that failed once and then answered leave no error: "succeeded"."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 2), ["m"])
    with fake_openai() as server:
        server.queue_faults("error_500")
        judge = fake_judge(server.base_url, backoff_base_s=0.01)
        job = run_job(
            django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[judge]
        )
    assert job.status == JudgeJobStatus.SUCCEEDED and job.message == ""


def test_a_job_whose_every_call_failed_shows_no_verdicts_on_its_page(
    django_capture_on_commit_callbacks: Any, fake_openai: Any, lead: Any
) -> None:
    """Every call ended, none gave a verdict: the page says 4 / 4 calls ended and 0 verdicts
    (it once read "Verdicts 4 / 4 (100 %)")."""
    from django.test import Client
    from django.urls import reverse

    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 4), ["m"])
    with fake_openai(fault_rates={"error_500": 1.0}) as server:
        judge = fake_judge(server.base_url, max_attempts=1, backoff_base_s=0.01)
        job = run_job(
            django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[judge]
        )
    progress = selectors.job_progress(job=job)
    assert (progress.done, progress.verdicts, progress.errors) == (4, 0, 4)
    client = Client()
    client.force_login(lead)
    page = client.get(reverse("judging:job_detail", args=[job.pk])).content.decode()
    verdicts = page[page.index('data-testid="verdicts"') :]
    assert verdicts[verdicts.index(">") + 1 : verdicts.index("</dd>")].strip() == "0"
    assert "Calls ended" in page
