"""Tests for judging.views: the pages, who may use them, and their query counts."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from pytest_django.asserts import assertInHTML

from annotation import services as annotation_services
from annotation.models import ImportJob
from judging import services
from judging.models import Judge, JudgeJob, JudgeJobJudge, ModelResponse, Verdict
from tests.annotation.factories import UserFactory, mmooc_dataset
from tests.judging.factories import JudgeFactory, bulk_responses, bulk_samples, rule_judge
from tests.support.html import attribute, element, elements, has, text
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
    results = element(page, id="job-links")
    assert not has(results, "hidden")
    disagreements = reverse("annotation:sample_list", args=[dataset.pk]) + "?judges_disagree=true"
    assert element(results, "a", href=disagreements)


def test_refused_jobs_show_the_reason_instead_of_failing(lead: Any) -> None:
    """Scoring a dataset without responses re-renders the form with the reason (no 500)."""
    dataset = mmooc_dataset()
    reply = login(lead).post(
        reverse("judging:dataset_judging", args=[dataset.pk]),
        {"task": "scoring", "judges": [rule_judge().pk], "repeats": 1},
    )
    assert reply.status_code == 400 and "no model responses" in reply.content.decode()


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
    # session, user, the user's roles, dataset, its taxonomy's groups, the kept aggregates'
    # computation and their cells, audit set
    with django_assert_num_queries(8):
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
    # session, user, roles, dataset, models, jobs, job judges, failed calls, uploads, form's judges
    with django_assert_num_queries(10):
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


def test_leads_upload_responses_or_verdicts_on_the_judging_page(
    lead: Any, annotator: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """The upload queues an import job and shows its page; a form without a file comes back
    with the reason; annotators see no form and may not post one."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 2)
    annotation_services.dataset_add_member(dataset=dataset, user=annotator)
    url = reverse("judging:dataset_upload", args=[dataset.pk])
    line = b'{"sample_id": "bulk-0", "judge": "o3", "label": "answerable"}\n'
    client = login(lead)
    with django_capture_on_commit_callbacks(execute=True):
        reply = client.post(
            url,
            {"kind": "verdicts", "format": "jsonl", "file": SimpleUploadedFile("v.jsonl", line)},
        )
    job = ImportJob.objects.get(dataset=dataset)
    assert reply.status_code == 302 and reply["Location"] == f"/imports/{job.pk}/"
    job.refresh_from_db()
    assert (job.kind, job.status, job.imported) == ("verdicts", "succeeded", 1)
    page = client.get(reverse("judging:dataset_judging", args=[dataset.pk])).content.decode()
    assert f'href="/imports/{job.pk}/"' in page and "v.jsonl" in page
    missing = client.post(url, {"kind": "responses", "format": "jsonl"})
    assert missing.status_code == 400 and 'id="upload-form"' in missing.content.decode()
    member = login(annotator)
    assert (
        'id="upload-form"'
        not in member.get(reverse("judging:dataset_judging", args=[dataset.pk])).content.decode()
    )
    assert member.post(url, {"kind": "responses"}).status_code == 403
    assert ImportJob.objects.count() == 1


def _running_job_with_an_error(task: str = "mmooc_scoring") -> JudgeJob:
    """A running job of one judge with one verdict and one failed call so far."""
    dataset = mmooc_dataset()
    (first, second) = bulk_responses(bulk_samples(dataset, 2), ["m"])
    judge = JudgeFactory.create(name="flaky")
    job = JudgeJob.objects.create(
        dataset=dataset, task=task, status="running", total=2, started_at=timezone.now()
    )
    JudgeJobJudge.objects.create(job=job, judge=judge, prompt_version="v1")
    common = {"judge": judge, "task": task, "prompt_version": "v1", "job": job}
    Verdict.objects.create(sample=first.sample, response=first, answer_score=1, **common)
    Verdict.objects.create(
        sample=second.sample,
        response=second,
        error_kind="timeout",
        error="The judge did not answer in time.",
        **common,
    )
    return job


def test_a_job_page_shows_failed_calls_and_swaps_cancel_for_links_once_ended(lead: Any) -> None:
    """While running: Cancel, the failed calls by judge and kind, no result links. Once
    ended with errors: "Finished with errors", Retry and the leaderboard link, no Cancel."""
    job = _running_job_with_an_error()
    client = login(lead)
    url = reverse("judging:job_detail", args=[job.pk])
    page = client.get(url).content.decode()
    assert 'id="job-cancel"' in page and "The judge did not answer in time." in page
    assert has(element(page, id="job-links"), "hidden")
    assert has(element(page, id="job-retry"), "hidden")
    assertInHTML("<td>flaky</td>", page)
    assertInHTML("<td>timeout</td>", page)
    services.judge_job_end(job=job)
    job.refresh_from_db()
    assert job.status == "with_errors" and job.message.startswith("1 of 2 calls failed")
    page = client.get(url).content.decode()
    assert 'id="job-cancel"' not in page and "Finished with errors" in page
    assert not has(element(page, id="job-links"), "hidden")
    assert reverse("judging:leaderboard", args=[job.dataset_id]) in page
    retry_form = element(page, id="job-retry")
    assert attribute(retry_form, "data-when") == "ended"
    assert not has(retry_form, "hidden")


def test_an_answerability_job_links_to_the_samples_judges_disagree_on(lead: Any) -> None:
    """A finished answerability job leads to the dataset's samples flagged by the judges."""
    job = _running_job_with_an_error(task="answerability")
    JudgeJob.objects.filter(pk=job.pk).update(status="succeeded")
    page = login(lead).get(reverse("judging:job_detail", args=[job.pk])).content.decode()
    link = reverse("annotation:sample_list", args=[job.dataset_id]) + "?judges_disagree=true"
    assert link in page


def test_the_jobs_page_lists_failed_calls_per_judge_and_kind(lead: Any) -> None:
    """The dataset's job list shows each job's failed calls by judge and kind."""
    job = _running_job_with_an_error()
    page = login(lead).get(reverse("judging:dataset_judging", args=[job.dataset_id]))
    text = " ".join(page.content.decode().split())
    assert "flaky: timeout 1" in text


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
        ("judging:job_retry", "Only a job that failed, was cancelled or finished with errors"),
    ):
        reply = client.post(reverse(action, args=[job.pk]), follow=True)
        assert reply.redirect_chain == [(detail, 302)]
        assert refusal in reply.content.decode()
        assert login(annotator).post(reverse(action, args=[job.pk])).status_code == 403


def _second_review(sample: Any) -> None:
    from tests.review.factories import submit

    submit(UserFactory.create(username="rev-no"), sample, "reject", note="the car is visible")


def _judged_sample(models: int, judges: int, *, second_review: bool = True) -> Any:
    """A sample in review on a blind queue, with two disagreeing reviews (so it waits for
    adjudication), `models` responses and `judges` judges' votes and scores."""
    from annotation.models import Sample
    from tests.review.factories import review_dataset, submit

    dataset = review_dataset(1, k=2)
    sample = Sample.objects.select_related("dataset").get(dataset=dataset)
    submit(UserFactory.create(username="rev-yes"), sample, note="looks right")
    if second_review:
        _second_review(sample)
    _add_judging(sample, models, judges)
    return Sample.objects.select_related("dataset").get(pk=sample.pk)


def _add_judging(sample: Any, models: int, judges: int) -> None:
    from tests.judging.test_selectors import score, vote

    start = ModelResponse.objects.filter(sample=sample).count()
    names = [f"model-{i}" for i in range(start, start + models)]
    responses = bulk_responses([sample], names)
    responses = [r for r in responses if r.model_name in names]
    for _ in range(judges):
        judge = JudgeFactory.create()
        vote(judge, sample, "unanswerable")
        for response in responses:
            score(judge, response, 1, 0.5)


def test_the_lead_reads_responses_and_verdicts_on_the_sample_and_adjudication_pages(
    lead: Any,
) -> None:
    """Both pages include the one card: each model's response, every judge's verdict with
    its reason, and the judges' consensus; the sample page adds the reviews side by side."""
    sample = _judged_sample(models=2, judges=2)
    client = login(lead)
    for url in (
        reverse("annotation:sample_detail", args=[sample.pk]),
        reverse("review:adjudicate", args=[sample.pk]),
    ):
        page = client.get(url).content.decode()
        panel = element(page, "section", id="judging-panel")
        responses = elements(panel, "article", data_model=True)
        assert [attribute(r, "data-model") for r in responses] == ["model-0", "model-1"]
        response = ModelResponse.objects.get(sample=sample, model_name="model-0")
        assert response.response in text(responses[0])
        judge = Judge.objects.exclude(name="rule").order_by("name").first()
        assert judge is not None
        row = element(responses[0], "tr", data_judge=judge.name)
        assert f"{judge.name} on model-0" in text(row) and "0.75" in text(row)
        assert "score 0.75 (answer 1.00, reasoning 0.50; mean over 2 judges)" in text(
            element(responses[0], "p", data_testid="response-consensus")
        )
        agreement = text(element(panel, "p", data_testid="answerability-consensus"))
        assert "Every judge that voted agrees" in agreement and "unanswerable" in agreement
    page = client.get(reverse("annotation:sample_detail", args=[sample.pk])).content.decode()
    reviews = element(page, "section", id="reviews-panel")
    assert "looks right" in text(element(reviews, "tr", data_reviewer="rev-yes"))
    assert "the car is visible" in text(element(reviews, "tr", data_reviewer="rev-no"))


def test_the_sample_page_costs_the_same_queries_however_much_was_judged(lead: Any) -> None:
    """One response judged by one judge and one review, or six responses judged by four
    judges and two reviews: the same query count on the sample page; on the adjudication
    page (which needs the two reviews), the same for one response or six."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    sample = _judged_sample(models=1, judges=1, second_review=False)
    client = login(lead)
    sample_page = reverse("annotation:sample_detail", args=[sample.pk])
    adjudication = reverse("review:adjudicate", args=[sample.pk])

    def count(url: str) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    few = count(sample_page)
    _second_review(sample)
    few_adjudication = count(adjudication)
    _add_judging(sample, models=5, judges=3)
    assert ModelResponse.objects.filter(sample=sample).count() == 6
    assert count(sample_page) == few <= SAMPLE_PAGE_QUERIES
    assert count(adjudication) == few_adjudication <= ADJUDICATION_PAGE_QUERIES


# The pages' budgets (session, user, roles, sample, panels: gold, reviews, judging).
SAMPLE_PAGE_QUERIES = 11
ADJUDICATION_PAGE_QUERIES = 16


def test_a_safety_sample_shows_each_judges_label_and_the_share_called_safe(lead: Any) -> None:
    """On an MCBench scenario the card shows each judge's safe/unsafe label and, as the
    consensus, the share of judges that called the response safe."""
    from annotation.models import Sample
    from judging.models import JudgeTask
    from tests.review.factories import trimodal_pair

    unsafe, _safe = trimodal_pair()
    sample = Sample.objects.select_related("dataset").get(pk=unsafe.pk)
    (response,) = bulk_responses([sample], ["omni"])
    for name, label in (("j-safe", "safe"), ("j-unsafe", "unsafe")):
        Verdict.objects.create(
            judge=JudgeFactory.create(name=name),
            task=JudgeTask.MCBENCH_SAFETY,
            prompt_version="v1",
            sample=sample,
            response=response,
            label=label,
            rationale=f"{name} reasons",
        )
    page = login(lead).get(reverse("annotation:sample_detail", args=[sample.pk])).content.decode()
    card = element(page, "article", data_model="omni")
    assert "unsafe" in text(element(card, "tr", data_judge="j-unsafe"))
    assert "j-safe reasons" in text(element(card, "tr", data_judge="j-safe"))
    consensus = text(element(card, "p", data_testid="response-consensus"))
    assert "safe 0.50 (mean over 2 judges)" in consensus


def test_an_auditor_sees_no_judge_on_the_sample_page(auditor: Any) -> None:
    """Auditors rate before they learn what the judges said: the card is for leads only."""
    sample = _judged_sample(models=1, judges=1)
    annotation_services.dataset_add_member(dataset=sample.dataset, user=auditor)
    reply = login(auditor).get(reverse("annotation:sample_detail", args=[sample.pk]))
    assert reply.status_code == 200
    page = reply.content.decode()
    assert 'id="judging-panel"' not in page and "model-0" not in page


def test_the_judges_card_reads_in_chinese(lead: Any) -> None:
    """In Chinese the card's heading, the consensus and the labels are translated."""
    sample = _judged_sample(models=1, judges=2)
    client = Client(headers={"accept-language": "zh-hans"})
    client.force_login(lead)
    page = client.get(reverse("annotation:sample_detail", args=[sample.pk])).content.decode()
    panel = element(page, "section", id="judging-panel")
    assert "模型回答与评审模型的判定" in text(panel)
    consensus = text(element(panel, "p", data_testid="answerability-consensus"))
    assert consensus == "所有投票的评审模型都同意样本的标签（“不可回答”）。"
    assert "评审模型的共识：得分 0.75" in text(
        element(panel, "p", data_testid="response-consensus")
    )
    assert "轮次" in text(element(page, "section", id="reviews-panel"))
