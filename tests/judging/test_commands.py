"""Tests for the judging management commands."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import NoteKey, Sample, SampleNote
from judging.management.commands.run_judges import Command as RunJudges
from judging.models import Judge, JudgeJob, ModelResponse, Verdict
from tests.annotation.factories import mmooc_dataset
from tests.judging.factories import LOGICVISTA, bulk_samples, jsonl, logicvista_dataset

pytestmark = pytest.mark.django_db


def run(*args: Any) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_add_judge_creates_then_updates_and_refuses_bad_settings() -> None:
    """The command stores the key's variable name; bad settings are a CommandError."""
    text = run(
        "add_judge", "o3", "--base-url", "http://h.invalid/v1", "--model", "o3",
        "--api-key-env", "JUDGE_KEY_OPENAI", "--max-concurrency", "16", "--rpm", "500",
        "--temperature", "0.2", "--timeout", "30", "--text-only", "--family", "openai",
    )  # fmt: skip
    assert text.startswith("Added judge o3")
    judge = Judge.objects.get(name="o3")
    assert (judge.requests_per_minute, judge.text_only, judge.family) == (500, True, "openai")
    assert run("add_judge", "o3", "--max-concurrency", "4").startswith("Updated")
    with pytest.raises(CommandError, match="base URL"):
        run("add_judge", "bare")
    with pytest.raises(CommandError, match="JUDGE_KEY_DATABASE_URL"):
        run("add_judge", "o3", "--api-key-env", "DATABASE_URL")
    with pytest.raises(CommandError, match=r"JUDGE_ALLOWED_HOSTS lists 127\.0\.0\.1:6379"):
        run("add_judge", "o3", "--base-url", "http://127.0.0.1:6379/v1")
    judge.refresh_from_db()
    assert (judge.api_key_env, judge.base_url) == ("JUDGE_KEY_OPENAI", "http://h.invalid/v1")


def test_import_responses_prints_a_summary_and_fails_on_rejections(tmp_path: Path) -> None:
    """LogicVista answers import (the invalid item's row rejected, exit non-zero); rerun is
    unchanged; an unknown dataset is a CommandError."""
    logicvista_dataset()
    source = str(LOGICVISTA / "answers" / "GPT4-answers.json")
    with pytest.raises(CommandError, match="1 rows rejected"):
        run("import_responses", source, "--dataset", "logicvista", "--format", "logicvista")
    assert ModelResponse.objects.filter(model_name="GPT4").count() == 160
    out = StringIO()
    with pytest.raises(CommandError):
        call_command(
            "import_responses", source, "--dataset", "logicvista", "--format", "logicvista",
            stdout=out,
        )  # fmt: skip
    assert "imported 0, unchanged 160" in out.getvalue() and "v1_382" in out.getvalue()
    with pytest.raises(CommandError, match="No dataset"):
        run("import_responses", source, "--dataset", "nope", "--format", "logicvista")


def test_run_judges_queues_a_job_and_refuses_bad_requests(
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The job runs (inline here) and records votes; unknown judges or no responses refuse."""
    dataset = mmooc_dataset(name="demo")
    bulk_samples(dataset, 5)
    with django_capture_on_commit_callbacks(execute=True):
        text = run("run_judges", "--dataset", "demo", "--task", "answerability", "--judges", "rule")
    assert "Queued job" in text
    assert SampleNote.objects.filter(key=NoteKey.JUDGE_VOTES).count() == 5
    with pytest.raises(CommandError, match="Unknown judges: gpt"):
        run("run_judges", "--dataset", "demo", "--task", "scoring", "--judges", "rule,gpt")
    with pytest.raises(CommandError, match="no model responses"):
        run("run_judges", "--dataset", "demo", "--task", "scoring", "--judges", "rule")


def test_run_judges_wait_exits_when_the_job_ends(django_capture_on_commit_callbacks: Any) -> None:
    """--wait prints a final succeeded line (the job ran inline, eager, here)."""
    dataset = mmooc_dataset(name="waiting")
    bulk_samples(dataset, 2)
    ModelResponse.objects.bulk_create(
        ModelResponse(dataset=dataset, sample=s, model_name="m", response="A")
        for s in Sample.objects.filter(dataset=dataset)
    )
    with django_capture_on_commit_callbacks(execute=True):
        run("run_judges", "--dataset", "waiting", "--task", "scoring", "--judges", "rule")
    job = JudgeJob.objects.get()
    assert job.status == "succeeded"
    # Waiting on a finished job returns at once with its summary.
    cmd_out = StringIO()
    RunJudges(stdout=cmd_out)._wait(job, poll=0.01, timeout=5)
    assert "succeeded: 2/2 verdicts" in cmd_out.getvalue()


def test_import_verdicts_command_reports_and_exits_non_zero_on_bad_lines(tmp_path: Path) -> None:
    """A good line is imported, a bad one is reported by line and makes the exit non-zero."""
    bulk_samples(mmooc_dataset(name="v"), 1)
    path = jsonl(
        tmp_path / "v.jsonl",
        [
            {"sample_id": "bulk-0", "judge": "gpt-4o", "label": "unanswerable", "reason": "r"},
            {"sample_id": "bulk-0", "judge": "gpt-4o", "label": "maybe", "repeat": 1},
        ],
    )
    out = StringIO()
    with pytest.raises(CommandError, match="1 rows rejected"):
        call_command("import_verdicts", str(path), "--dataset", "v", stdout=out)
    assert "imported 1" in out.getvalue() and "line 2" in out.getvalue()
    assert Verdict.objects.get().label == "unanswerable"
