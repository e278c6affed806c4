"""Tests for judging.views: the pages, who may use them, and their query counts."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services as annotation_services
from judging import services
from judging.models import Judge, JudgeJob
from tests.annotation.factories import mmooc_dataset
from tests.judging.factories import JudgeFactory, bulk_responses, bulk_samples, rule_judge
from tests.support.http import redirect_url

pytestmark = pytest.mark.django_db


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_lead_starts_a_job_from_the_page_and_watches_it(
    lead: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The form starts a job and leads to its page, which polls the JSON endpoint and, once
    the job finished, links to where its result is."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 4)
    client = login(lead)
    url = reverse("judging:dataset_judging", args=[dataset.pk])
    assert client.get(url).status_code == 200
    rule = rule_judge()
    with django_capture_on_commit_callbacks(execute=True):
        reply = client.post(url, {"task": "answerability", "judges": [rule.pk], "repeats": 1})
    job = JudgeJob.objects.get()
    assert reply.status_code == 302 and redirect_url(reply) == reverse(
        "judging:job_detail", args=[job.pk]
    )
    page = client.get(redirect_url(reply)).content.decode()
    assert reverse("api_judge_job", args=[job.pk]) in page and "js/job-progress.js" in page
    job.refresh_from_db()
    assert job.is_finished
    results = page.split('id="job-results"')[1].split("</p>")[0]
    assert "hidden" not in results.split(">")[0]
    assert reverse("judging:leaderboard", args=[dataset.pk]) in results


def test_refused_jobs_show_the_reason_instead_of_failing(lead: Any) -> None:
    """Scoring a dataset without responses re-renders the form with the reason (no 500)."""
    dataset = mmooc_dataset()
    reply = login(lead).post(
        reverse("judging:dataset_judging", args=[dataset.pk]),
        {"task": "scoring", "judges": [rule_judge().pk], "repeats": 1},
    )
    assert reply.status_code == 200 and "no model responses" in reply.content.decode()


def test_annotators_may_not_start_jobs_or_configure_judges(annotator: Any) -> None:
    """Member annotators see the judging page but posting a job or opening judges is 403."""
    dataset = mmooc_dataset()
    annotation_services.dataset_add_member(dataset=dataset, user=annotator)
    client = login(annotator)
    url = reverse("judging:dataset_judging", args=[dataset.pk])
    assert client.get(url).status_code == 200
    assert client.post(url, {"task": "answerability"}).status_code == 403
    assert client.get(reverse("judging:judge_list")).status_code == 403


def test_the_leaderboard_page_draws_an_svg_in_constant_queries(
    auditor: Any, django_assert_num_queries: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """An auditor member sees an inline SVG chart and the n behind each score."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 6), ["m1", "m2", "m3"])
    with django_capture_on_commit_callbacks(execute=True):
        services.judge_job_start(dataset=dataset, task="scoring", judges=[rule_judge()])
    annotation_services.dataset_add_member(dataset=dataset, user=auditor)
    client = login(auditor)
    url = reverse("judging:leaderboard", args=[dataset.pk])
    client.get(url)
    with django_assert_num_queries(
        5
    ):  # session, user, dataset (role test inside), verdicts, audit set
        page = client.get(url).content.decode()
    assert "<svg" in page and "n=6" in page and "m3" in page
    assert "cdn" not in page.lower()


def test_the_jobs_page_takes_constant_queries(
    lead: Any, django_assert_num_queries: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The dataset's judging page costs the same queries with one job or five."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 2)
    client = login(lead)
    url = reverse("judging:dataset_judging", args=[dataset.pk])
    for _ in range(5):
        with django_capture_on_commit_callbacks(execute=True):
            services.judge_job_start(dataset=dataset, task="answerability", judges=[rule_judge()])
    client.get(url)
    # session, user, roles, dataset, models, jobs, job judges, form's judges
    with django_assert_num_queries(8):
        client.get(url)


def test_the_judges_page_refuses_bad_judges_and_says_what_to_rename(lead: Any) -> None:
    """Adding a judge that would read SECRET_KEY or call a loopback address shows the messages
    and saves nothing; a judge saved before the rules is listed with what to change."""
    client = login(lead)
    url = reverse("judging:judge_list")
    page = client.get(url).content.decode()
    assert "JUDGE_KEY_" in page and "JUDGE_ALLOWED_HOSTS" in page  # the fields' help
    form = {
        "name": "sneaky",
        "kind": "openai",
        "base_url": "http://127.0.0.1:5432/v1",
        "model": "m",
        "api_key_env": "SECRET_KEY",
        "temperature": 0,
        "timeout_s": 30,
        "max_concurrency": 2,
        "prompt_version": "v1",
    }
    refused = client.post(url, form).content.decode()
    assert "JUDGE_KEY_SECRET_KEY" in refused and "127.0.0.1:5432" in refused
    assert not Judge.objects.filter(name="sneaky").exists()
    JudgeFactory.create(name="old", api_key_env="OPENAI_API_KEY", base_url="https://api.invalid/v1")
    listed = client.get(url).content.decode()
    assert "This judge cannot be called until it is changed" in listed
    assert "JUDGE_KEY_OPENAI_API_KEY" in listed


def test_the_admin_refuses_what_the_services_refuse(admin_client: Client) -> None:
    """Saving a judge in the admin runs the same checks: a non-prefixed key variable and a
    metadata address are refused."""
    url = reverse("admin:judging_judge_add")
    form = {
        "name": "adm",
        "kind": "openai",
        "base_url": "http://169.254.169.254/latest",
        "model": "m",
        "api_key_env": "DATABASE_URL",
        "temperature": 0,
        "timeout_s": 30,
        "max_concurrency": 2,
        "max_tokens": 512,
        "prompt_version": "v1",
        "max_attempts": 5,
        "backoff_base_s": 0.5,
        "backoff_max_s": 30,
        "retry_after_max_s": 300,
        "enabled": "on",
    }
    page = admin_client.post(url, form)
    assert page.status_code == 200
    text = page.content.decode()
    assert "JUDGE_KEY_DATABASE_URL" in text and "cloud metadata" in text
    assert not Judge.objects.filter(name="adm").exists()
    good = {**form, "base_url": "https://api.invalid/v1", "api_key_env": "JUDGE_KEY_X"}
    assert admin_client.post(url, good).status_code == 302
    assert Judge.objects.filter(name="adm").exists()


def test_cancel_and_retry_say_why_a_finished_job_stays_as_it_is(
    lead: Any, annotator: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """A lead's cancel or retry of a finished job leads back to its page with the refusal;
    others may not act on a job."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 2)
    client = login(lead)
    url = reverse("judging:dataset_judging", args=[dataset.pk])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"task": "answerability", "judges": [rule_judge().pk], "repeats": 1})
    job = JudgeJob.objects.get()
    detail = reverse("judging:job_detail", args=[job.pk])
    for action, refusal in (
        ("judging:job_cancel", "The job has already finished."),
        ("judging:job_retry", "Only a failed or cancelled job can be retried."),
    ):
        reply = client.post(reverse(action, args=[job.pk]), follow=True)
        assert reply.redirect_chain == [(detail, 302)]
        assert refusal in reply.content.decode()
        assert login(annotator).post(reverse(action, args=[job.pk])).status_code == 403
