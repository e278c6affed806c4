"""Tests for judging.services: judges, jobs end to end (eager), consensus, imports, cancel."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from annotation import selectors as annotation_selectors
from annotation.models import JobStatus, NoteKey, Sample
from judging import services
from judging.models import JudgeJobChunk, JudgeKind, ModelResponse, Verdict
from tests.annotation.factories import mmooc_dataset, mmooc_sample, png_bytes
from tests.conftest import client_for
from tests.judging.factories import (
    bulk_responses,
    bulk_samples,
    fake_judge,
    jsonl,
    rule_judge,
    run_job,
)
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db


def test_a_judge_never_stores_a_key_and_rejects_bad_settings() -> None:
    """The key variable must be a name; an endpoint judge needs a URL and a model."""
    with pytest.raises(ValidationError) as error:
        services.judge_create(name="gpt", base_url="", model="", api_key_env="sk-live-123")
    assert {"base_url", "model", "api_key_env"} <= set(error.value.message_dict)
    judge = services.judge_create(
        name="gpt", base_url="http://x.invalid/v1", model="gpt-4o", api_key_env="JUDGE_KEY_OPENAI"
    )
    assert judge.api_key_env == "JUDGE_KEY_OPENAI"
    with pytest.raises(ValidationError):
        services.judge_update(judge=judge, changes={"prompt_version": "v999"})


def test_the_rule_judge_runs_a_whole_scoring_job_offline(
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Every response gets exactly one verdict from the rule judge; the job succeeds."""
    dataset = mmooc_dataset()
    responses = bulk_responses(bulk_samples(dataset, 12), ["m1", "m2"])
    job = run_job(
        django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[rule_judge()]
    )
    assert job.status == JobStatus.SUCCEEDED and job.task == "mmooc_scoring"
    verdicts = Verdict.objects.filter(job=job)
    assert verdicts.count() == len(responses) == job.total
    assert not verdicts.exclude(error_kind="").exists()
    assert {v.answer_score for v in verdicts} <= {0, 1}


def test_running_a_job_again_fills_only_what_is_missing(
    django_capture_on_commit_callbacks: Any, fake_openai: Any
) -> None:
    """A second job on the same data makes no call for items that already hold a verdict."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 10)
    bulk_responses(samples, ["m"])
    with fake_openai() as server:
        judge = fake_judge(server.base_url)
        first = run_job(
            django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[judge]
        )
        calls_after_first = len(server.chat_records())
        ModelResponse.objects.filter(sample=samples[0]).first().verdicts.all().delete()  # type: ignore[union-attr]
        second = run_job(
            django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[judge]
        )
        assert len(server.chat_records()) == calls_after_first + 1
    assert second.preexisting == 9
    assert Verdict.objects.filter(job=second).count() == 1
    assert Verdict.objects.filter(judge=judge).count() == 10 == first.total


def test_errors_are_recorded_then_retried_by_the_next_job(
    django_capture_on_commit_callbacks: Any, fake_openai: Any
) -> None:
    """An item whose attempts all fail holds an explicit error; a later job replaces it."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 1), ["m"])
    with fake_openai() as server:
        judge = fake_judge(server.base_url, max_attempts=2)
        server.queue_faults("error_500", "error_500")
        first = run_job(
            django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[judge]
        )
        (error,) = Verdict.objects.filter(judge=judge)
        assert error.error_kind == "server_error" and error.attempts == 2 and error.job == first
        second = run_job(
            django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[judge]
        )
    (verdict,) = Verdict.objects.filter(judge=judge)
    assert verdict.pk == error.pk and verdict.error_kind == "" and verdict.job == second
    assert verdict.answer_score in (0, 1) and verdict.raw and verdict.latency_ms is not None
    assert verdict.prompt_tokens and verdict.completion_tokens


def test_a_job_whose_judge_key_variable_is_unset_does_not_start_and_says_why(
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """The job's check of its judges finds the key variable unset: the job fails before any
    item is sent, naming the variable; no verdict or error row is made."""
    monkeypatch.delenv("JUDGE_KEY_NO_SUCH", raising=False)
    settings.JUDGE_ALLOWED_HOSTS = ["127.0.0.1:9"]
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 3), ["m"])
    judge = fake_judge("http://127.0.0.1:9/v1", api_key_env="JUDGE_KEY_NO_SUCH")
    job = run_job(
        django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[judge]
    )
    assert job.status == JobStatus.FAILED
    assert "did not start" in job.message and "JUDGE_KEY_NO_SUCH" in job.message
    assert not Verdict.objects.filter(job=job).exists() and not job.chunks.exists()


def test_a_judge_saved_before_the_key_rule_cannot_start_a_job(
    monkeypatch: pytest.MonkeyPatch, fake_openai: Any
) -> None:
    """A judge in the database that names SECRET_KEY-like variables (saved before the prefix
    rule) is refused when a job would start, saying what to rename; nothing is called."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-workers-own-secret")
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 3), ["m"])
    with fake_openai() as server:
        judge = fake_judge(server.base_url, api_key_env="OPENAI_API_KEY")
        with pytest.raises(ValidationError, match="JUDGE_KEY_OPENAI_API_KEY"):
            services.judge_job_start(dataset=dataset, task="scoring", judges=[judge])
        assert server.records == []


def test_a_judge_on_a_loopback_address_is_refused_until_allowed(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    """Without JUDGE_ALLOWED_HOSTS the fake server on 127.0.0.1 is never called: the job is
    refused, naming the host:port to allow; allowed, the job succeeds."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 2), ["m"])
    settings.JUDGE_ALLOWED_HOSTS = []
    with FakeOpenAI() as server:
        judge = fake_judge(server.base_url)
        with pytest.raises(ValidationError, match=server.host_port):
            services.judge_job_start(dataset=dataset, task="scoring", judges=[judge])
        assert server.records == []
        settings.JUDGE_ALLOWED_HOSTS = [server.host_port]
        allowed = run_job(
            django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[judge]
        )
        assert len(server.chat_records()) == 2 and len(server.probe_records()) == 1
    assert not Verdict.objects.filter(job=allowed).exclude(error_kind="").exists()


def test_answerability_flags_disagreements_and_notes_every_vote(
    django_capture_on_commit_callbacks: Any, fake_openai: Any
) -> None:
    """Samples where a judge disagrees with the sample's label are flagged; votes are noted."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 9)
    Sample.objects.filter(pk=samples[0].pk).update(judges_disagree=True)

    def responder(request: dict[str, Any], digest: str) -> str:
        text = str(request["messages"][1]["content"])
        return '{"answerable": %s, "category": null, "reason": "r"}' % (
            "false" if "number 4:" in text else "true"
        )

    with fake_openai(responder=responder) as server:
        judge = fake_judge(server.base_url, name="llm")
        job = run_job(
            django_capture_on_commit_callbacks,
            dataset=dataset,
            task="answerability",
            judges=[rule_judge(), judge],
        )
    assert job.status == JobStatus.SUCCEEDED
    # bulk_samples: i % 3 == 0 are out-of-context; the fake says only sample 4 is unanswerable.
    flagged = set(Sample.objects.filter(judges_disagree=True).values_list("external_id", flat=True))
    assert flagged == {"bulk-0", "bulk-3", "bulk-6", "bulk-4"}
    votes = annotation_selectors.sample_note(
        sample_id=Sample.objects.get(external_id="bulk-4").pk, key=NoteKey.JUDGE_VOTES
    )
    assert votes == [
        {"judge": "llm", "label": "unanswerable", "category": None},
        {"judge": "rule", "label": "abstain", "category": None},
    ]


def test_the_rule_judge_alone_leaves_answerability_undecided(
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The rule judge abstains on every sample: no sample is flagged (an earlier flag is
    lifted), none counts as agreed, and every abstention is stored as such, not as an error."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 6)
    Sample.objects.filter(pk=samples[0].pk).update(judges_disagree=True)
    job = run_job(
        django_capture_on_commit_callbacks,
        dataset=dataset,
        task="answerability",
        judges=[rule_judge()],
    )
    assert job.status == JobStatus.SUCCEEDED
    verdicts = Verdict.objects.filter(job=job)
    assert {(v.label, v.error_kind) for v in verdicts} == {("abstain", "")}
    assert not Sample.objects.filter(dataset=dataset, judges_disagree=True).exists()
    assert services.judge_job_apply_consensus(job=job) == {
        "agree": 0,
        "disagree": 0,
        "undecided": 6,
    }


def test_images_go_to_the_judge_as_data_urls_and_text_only_judges_get_none(
    django_capture_on_commit_callbacks: Any, fake_openai: Any
) -> None:
    """A vision judge receives the sample's PNG as a base64 data URL; a text-only one does not."""
    dataset = mmooc_dataset()
    sample = mmooc_sample(dataset)
    with fake_openai() as server:
        vision = fake_judge(server.base_url, name="vision")
        text = fake_judge(server.base_url, name="text", text_only=True)
        run_job(
            django_capture_on_commit_callbacks,
            dataset=dataset,
            task="answerability",
            judges=[vision, text],
        )
        bodies = {r.body["model"] + str(i): r.body for i, r in enumerate(server.chat_records())}
    parts = [b["messages"][1]["content"] for b in bodies.values()]
    images = [p for p in parts if isinstance(p, list)]
    assert len(images) == 1 and len(parts) == 2
    url = images[0][1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    stored = sample.media_links.get().asset.file.read()
    assert base64.b64decode(url.split(",", 1)[1]) == stored
    assert png_bytes()[:8] == stored[:8]


def test_repeated_sampling_stores_one_verdict_per_repeat(
    django_capture_on_commit_callbacks: Any, fake_openai: Any
) -> None:
    """k = 3 votes per item at temperature > 0 give three verdicts with repeat 0, 1, 2."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 2), ["m"])
    with fake_openai() as server:
        judge = fake_judge(server.base_url, temperature=0.7)
        job = run_job(
            django_capture_on_commit_callbacks,
            dataset=dataset,
            task="scoring",
            judges=[judge],
            repeats=3,
        )
    repeats = sorted(Verdict.objects.filter(job=job).values_list("response_id", "repeat"))
    assert len(repeats) == 6 and {r for _i, r in repeats} == {0, 1, 2}
    with pytest.raises(ValidationError, match="temperature"):
        services.judge_job_start(dataset=dataset, task="scoring", judges=[rule_judge()], repeats=2)


def test_bad_job_requests_are_refused_with_reasons() -> None:
    """No judges, an external judge, or scoring without responses: a readable refusal."""
    dataset = mmooc_dataset()
    external, _created = services.judge_get_or_create_external(name="elsewhere")
    assert external.kind == JudgeKind.EXTERNAL
    with pytest.raises(ValidationError) as error:
        services.judge_job_start(dataset=dataset, task="scoring", judges=[external])
    text = " ".join(error.value.messages)
    assert "imported verdicts" in text and "no model responses" in text
    with pytest.raises(ValidationError):
        services.judge_job_start(dataset=dataset, task="answerability", judges=[])
    with pytest.raises(ValidationError):
        services.judge_job_start(dataset=dataset, task="bogus", judges=[rule_judge()])


def test_a_cancelled_job_skips_its_remaining_chunks(
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Chunks that start after the cancel make no verdict; the job ends cancelled."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 20), ["m"])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = services.judge_job_start(
            dataset=dataset, task="scoring", judges=[rule_judge()], chunk_size=5
        )
    services.judge_job_plan(job_id=job.pk)  # plan without running the chunks
    chunk = JudgeJobChunk.objects.filter(job=job).first()
    assert chunk is not None and callbacks
    services.judge_job_cancel(job=job)
    services.judge_chunk_run(chunk_id=chunk.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED
    assert not Verdict.objects.filter(job=job).exists()
    with pytest.raises(ValidationError):
        services.judge_job_cancel(job=job)


def test_a_chunk_run_twice_makes_no_duplicate_verdict(
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Running a finished chunk again (a redelivered task) changes nothing."""
    dataset = mmooc_dataset()
    bulk_responses(bulk_samples(dataset, 4), ["m"])
    job = run_job(
        django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[rule_judge()]
    )
    chunk = JudgeJobChunk.objects.get(job=job)
    JudgeJobChunk.objects.filter(pk=chunk.pk).update(status="running")
    assert services.judge_chunk_run(chunk_id=chunk.pk) == 0
    assert Verdict.objects.filter(job=job).count() == 4


def test_verdicts_made_elsewhere_are_imported_idempotently(tmp_path: Path) -> None:
    """Good lines are imported (judges created), a rerun is unchanged, bad lines say why."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, 2)
    bulk_responses(samples, ["m"])
    rows: list[dict[str, Any]] = [
        {
            "sample_id": "bulk-0",
            "judge": "gpt-4o",
            "task": "answerability",
            "label": "unanswerable",
        },
        {
            "sample_id": "bulk-1",
            "judge": "gpt-4o",
            "task": "scoring",
            "model": "m",
            "answer_score": 1,
            "reasoning_score": 0.75,
            "rationale": "fine",
        },
        {"sample_id": "nope", "judge": "gpt-4o", "task": "answerability", "label": "answerable"},
        {"sample_id": "bulk-1", "judge": "o1", "task": "scoring", "model": "m", "answer_score": 3},
    ]
    path = jsonl(tmp_path / "v.jsonl", rows)
    first = services.verdict_import(dataset=dataset, source=path)
    assert (first.imported, first.unchanged, len(first.rejected)) == (2, 0, 2)
    reasons = [r.message for r in first.rejected]
    assert "line 3" in reasons[0] and "nope" in reasons[0]
    assert "line 4" in reasons[1] and "answer_score" in reasons[1]
    again = services.verdict_import(dataset=dataset, source=path)
    assert (again.imported, again.unchanged) == (0, 2)
    scored = Verdict.objects.get(task="mmooc_scoring")
    assert scored.overall == pytest.approx(0.875) and scored.source == "import"


def test_issue_26_item_4_rule_only_job_keeps_earlier_judges_flags(
    django_capture_on_commit_callbacks: Any, fake_openai: Any
) -> None:
    """After an endpoint judge flagged samples, a rule-only answerability job leaves those
    flags: a sample's agreement comes from every judge's stored latest verdict."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 9)

    def responder(request: dict[str, Any], digest: str) -> str:
        text = str(request["messages"][1]["content"])
        return '{"answerable": %s, "category": null, "reason": "r"}' % (
            "false" if "number 4:" in text else "true"
        )

    with fake_openai(responder=responder) as server:
        judge = fake_judge(server.base_url, name="llm")
        run_job(
            django_capture_on_commit_callbacks,
            dataset=dataset,
            task="answerability",
            judges=[judge],
        )
    before = set(Sample.objects.filter(judges_disagree=True).values_list("external_id", flat=True))
    assert before
    job = run_job(
        django_capture_on_commit_callbacks,
        dataset=dataset,
        task="answerability",
        judges=[rule_judge()],
    )
    assert job.status == JobStatus.SUCCEEDED
    after = set(Sample.objects.filter(judges_disagree=True).values_list("external_id", flat=True))
    assert after == before


def test_defect_7_answerable_sample_quoting_a_refusal_stays_answerable(
    django_capture_on_commit_callbacks: Any, fake_openai: Any, tmp_path: Path, lead: Any
) -> None:
    """From an empty site: an imported shifted-IC sample whose reference quotes a refusal
    phrase stays answerable (its group says so): every judge agreeing "answerable" flags
    nothing, and the rule judge scores a right answer to it as right. A sample whose data
    gives no group is inferred from its reference, and marked as inferred."""
    from tests.annotation.imports_support import b64, dataset_for, run_import, write_lines
    from tests.judging.factories import LOGICVISTA

    images = sorted((LOGICVISTA / "images").glob("*.png"))[:2]
    quoting = {
        "question_id": "quote",
        "image": b64(images[0].read_bytes()),
        "question": "The sign claims the man is a lifeguard. What does his T-shirt say?",
        "answer": "I don't know how to swim",
        "reasoning": "The T-shirt is printed with these words; the sign is wrong.",
        "question_type": "vqa",
        "ic_type": "misleading_premise",
        "category": "logical_reasoning",
    }
    ungrouped = {
        "question_id": "bare",
        "image": b64(images[1].read_bytes()),
        "question": "What is the name of the person who drew this?",
        "answer": "I can't answer",
        "reasoning": "The image does not say.",
        "question_type": "vqa",
        "category": "logical_reasoning",
    }
    dataset = dataset_for("mmooc", "mmooc")
    run_import(dataset, "mmooc", write_lines(tmp_path / "mmooc.jsonl", [quoting, ungrouped]))
    quote = Sample.objects.get(dataset=dataset, external_id="quote")
    bare = Sample.objects.get(dataset=dataset, external_id="bare")
    assert (quote.answerability_group, bare.answerability_group) == ("shifted_ic", "")

    def responder(request: dict[str, Any], digest: str) -> str:
        answerable = "false" if "drew this" in str(request["messages"][1]["content"]) else "true"
        return f'{{"answerable": {answerable}, "category": null, "reason": "r"}}'

    with fake_openai(responder=responder) as server:
        job = run_job(
            django_capture_on_commit_callbacks,
            dataset=dataset,
            task="answerability",
            judges=[fake_judge(server.base_url, name="a"), fake_judge(server.base_url, name="b")],
        )
    assert job.status == JobStatus.SUCCEEDED
    quote.refresh_from_db()
    bare.refresh_from_db()
    assert quote.judges_disagree is False and bare.judges_disagree is False
    assert (quote.inferred_answerability, bare.inferred_answerability) == ("", "ooc")
    page = Client()
    page.force_login(lead)
    shown = page.get(reverse("annotation:sample_detail", args=[bare.pk])).content.decode()
    assert 'data-testid="inferred-answerability"' in shown and "inferred from" in shown
    assert (
        "inferred from"
        not in page.get(reverse("annotation:sample_detail", args=[quote.pk])).content.decode()
    )
    api = client_for(lead).get(f"/api/samples/{bare.pk}/").json()
    assert api["inferred_answerability"] == "ooc" and api["answerability_group"] == ""

    [response] = bulk_responses([quote], ["m"])
    response.response = "His T-shirt says: I don't know how to swim."
    response.save(update_fields=["response"])
    run_job(
        django_capture_on_commit_callbacks, dataset=dataset, task="scoring", judges=[rule_judge()]
    )
    verdict = Verdict.objects.get(response=response)
    assert verdict.rationale.startswith("correct"), verdict.rationale
