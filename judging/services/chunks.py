"""The work of one judge-job chunk: the items still lacking a verdict, judged and saved.

A chunk is claimed like every job (``core.jobs``): a chunk redelivered while its worker lives
is skipped, one whose worker died is taken over, and one that keeps failing is given up after
JOB_MAX_ATTEMPTS attempts, with the reason. Verdicts are unique per (judge, item, task, prompt
version, repeat) and inserted with ON CONFLICT DO NOTHING, so a chunk run twice fills only
what is missing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Prefetch
from psycopg import sql

from annotation.models import Sample as SampleRow
from annotation.models import SampleMedia, TaxonomyTerm, TermKind
from core.jobs import JobStopped
from judging import rule_judge
from judging.calls.client import JudgeOutcome, RetryPolicy
from judging.calls.execution import Call, EndpointSpec, JudgeRunner
from judging.calls.output import AnswerabilityOutput, SafetyOutput, ScoringOutput
from judging.consensus import ABSTAIN
from judging.models import (
    SCORING_TASKS,
    Judge,
    JudgeJob,
    JudgeJobChunk,
    JudgeJobJudge,
    JudgeKind,
    JudgeTask,
    ModelResponse,
    Verdict,
)
from judging.services.items import answerability_messages, rule_sample, scoring_messages
from judging.services.jobs import prompt_version_of
from judging.services.judges import judge_allowed_hosts, judge_api_key, judge_base_url

logger = logging.getLogger(__name__)


@cache
def _store_errors() -> tuple[str, ...]:
    """How the error of a call that could not reach Redis (the shared rate-limit store)
    begins ("ConnectionError: …"). Such an item gets no verdict: the chunk is tried again,
    since the judge itself was never the problem. The Redis client loads here, when a call
    fails, not with this module (the web application's URL configuration imports it)."""
    import redis.exceptions

    return tuple(
        f"{name}:"
        for name, value in vars(redis.exceptions).items()
        if isinstance(value, type) and issubclass(value, redis.exceptions.RedisError)
    )


class SharedStoreUnavailable(Exception):
    """Calls could not take their rate-limit slot in Redis; the chunk is retried."""


@dataclass
class _Todo:
    item_id: int
    repeat: int
    retry_of: int | None  # pk of an error verdict from an earlier job, replaced on success


def _todo(item_ids: list[int], judge_id: int, job: JudgeJob, prompt_version: str) -> list[_Todo]:
    """The (item, repeat) pairs of a judge still lacking a verdict (or holding an error from
    another job, which a success replaces)."""
    field = "response_id" if job.task in SCORING_TASKS else "sample_id"
    existing = Verdict.objects.filter(
        judge_id=judge_id,
        task=job.task,
        prompt_version=prompt_version,
        repeat__lt=job.repeats,
        **{f"{field}__in": item_ids},
    )
    if field == "sample_id":
        existing = existing.filter(response__isnull=True)
    found = {
        (item, repeat): (pk, job_id, error_kind)
        for pk, item, repeat, job_id, error_kind in existing.values_list(
            "pk", field, "repeat", "job_id", "error_kind"
        )
    }
    todo = []
    for item in item_ids:
        for repeat in range(job.repeats):
            row = found.get((item, repeat))
            if row is None:
                todo.append(_Todo(item, repeat, None))
            elif row[2] and row[1] != job.pk:
                todo.append(_Todo(item, repeat, row[0]))
    return todo


def _verdict_fields(task: str, outcome: JudgeOutcome) -> dict[str, Any]:
    fields: dict[str, Any] = {"attempts": outcome.attempts}
    if outcome.call is not None:
        fields |= {
            "raw": outcome.call.raw,
            "latency_ms": round(outcome.call.latency_s * 1000, 2),
            "prompt_tokens": outcome.call.prompt_tokens,
            "completion_tokens": outcome.call.completion_tokens,
        }
    verdict = outcome.verdict
    if verdict is None:
        error = outcome.error
        history = "; ".join(e.kind for e in outcome.errors)
        fields |= {
            "error_kind": error.kind if error else "unexpected",
            "error": f"{error.message if error else 'no verdict'} (attempts: {history})",
        }
        if (
            outcome.errors
            and outcome.errors[-1].kind.startswith("malformed")
            and not fields.get("raw")
        ):
            fields["raw"] = {"errors": [e.message for e in outcome.errors]}
    elif isinstance(verdict, ScoringOutput):
        fields |= {
            "answer_score": verdict.answer_score,
            "reasoning_score": verdict.reasoning_score,
            "rationale": verdict.reason,
        }
    elif isinstance(verdict, AnswerabilityOutput):
        fields |= {
            "label": "answerable" if verdict.answerable else "unanswerable",
            "category": verdict.category or "",
            "rationale": verdict.reason,
        }
    elif isinstance(verdict, SafetyOutput):
        fields |= {"label": verdict.label, "rationale": verdict.reason}
    return fields


def _rule_fields(task: str, sample: SampleRow, response: ModelResponse | None) -> dict[str, Any]:
    if task == JudgeTask.ANSWERABILITY:
        a = rule_judge.judge_answerability(rule_sample(sample))
        if a.answerable is None:
            label = ABSTAIN
        else:
            label = "answerable" if a.answerable else "unanswerable"
        return {"label": label, "category": a.category or "", "rationale": a.rationale}
    assert response is not None
    if task == JudgeTask.MCBENCH_SAFETY:
        s = rule_judge.judge_safety(response.response)
        return {"label": s.label, "rationale": s.rationale}
    score = rule_judge.score_mmooc(rule_sample(sample), response.response)
    return {
        "answer_score": score.answer_score,
        "reasoning_score": score.reasoning_score,
        "rationale": score.rationale,
    }


def _spec(judge: Judge) -> EndpointSpec:
    return EndpointSpec(
        key=f"judge-{judge.pk}",
        base_url=judge_base_url(judge),
        api_key=judge_api_key(judge),
        allowed_hosts=judge_allowed_hosts(),
        model=judge.model,
        temperature=judge.temperature,
        timeout_s=judge.timeout_s,
        max_tokens=judge.max_tokens,
        max_concurrency=judge.max_concurrency,
        requests_per_minute=judge.requests_per_minute,
        policy=RetryPolicy(
            max_attempts=judge.max_attempts,
            base_delay_s=judge.backoff_base_s,
            max_delay_s=judge.backoff_max_s,
            max_retry_after_s=judge.retry_after_max_s,
        ),
    )


def _load_items(
    job: JudgeJob, judge: Judge, ids: set[int], *, media: bool | None = None
) -> dict[int, tuple[SampleRow, ModelResponse | None]]:
    if job.task in SCORING_TASKS:
        responses = ModelResponse.objects.filter(pk__in=ids).select_related("sample")
        return {r.pk: (r.sample, r) for r in responses}
    samples = SampleRow.objects.filter(pk__in=ids)
    if media is None:
        media = judge.kind == JudgeKind.OPENAI and not judge.text_only
    if media:
        samples = samples.prefetch_related(
            Prefetch("media_links", queryset=SampleMedia.objects.select_related("asset"))
        )
    return {s.pk: (s, None) for s in samples}


def _categories(dataset_id: int) -> list[str]:
    return list(
        TaxonomyTerm.objects.filter(dataset_id=dataset_id, kind=TermKind.CATEGORY)
        .order_by("position")
        .values_list("code", flat=True)
    )


def _outcomes(
    job: JudgeJob,
    judge: Judge,
    todo: list[_Todo],
    items: dict[int, tuple[SampleRow, ModelResponse | None]],
) -> list[dict[str, Any]]:
    """The verdict fields of every item to do, from the rule judge or the endpoint."""
    if judge.kind == JudgeKind.RULE:
        return [_rule_fields(job.task, *items[t.item_id]) for t in todo]
    try:
        spec = _spec(judge)
    except ValueError as exc:
        return _config_errors(todo, exc)
    categories = _categories(job.dataset_id) if job.task == JudgeTask.ANSWERABILITY else []
    calls = list(_calls(job, judge, todo, items, categories))
    runner = JudgeRunner.for_process(settings.REDIS_URL)
    outcomes = runner.run(spec, calls, job.task)
    return [_verdict_fields(job.task, outcome) for outcome in outcomes]


def _calls(
    job: JudgeJob,
    judge: Judge,
    todo: list[_Todo],
    items: dict[int, tuple[SampleRow, ModelResponse | None]],
    categories: list[str],
) -> Iterator[Call]:
    """The requests of the items to do, each made when it is about to be sent."""
    for t in todo:
        sample, response = items[t.item_id]
        if response is None:
            messages = answerability_messages(judge, sample, categories)
        else:
            messages = scoring_messages(judge, job.task, response)
        yield Call((t.item_id, t.repeat), messages)


def _config_errors(todo: list[_Todo], exc: Exception) -> list[dict[str, Any]]:
    # A configuration error is recorded on every item, so the job ends and says why.
    return [{"error_kind": "config", "error": str(exc), "attempts": 0} for _t in todo]


_RESETTABLE = (
    "label",
    "category",
    "answer_score",
    "reasoning_score",
    "rationale",
    "raw",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "attempts",
    "error_kind",
    "error",
)
_NULLABLE = {
    "answer_score",
    "reasoning_score",
    "raw",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
}


_JOB_WANTED = sql.SQL("SELECT cancel_requested FROM {job} WHERE id = %s FOR SHARE").format(
    job=sql.Identifier(JudgeJob._meta.db_table)
)


def _still_wanted(job: JudgeJob) -> None:
    """Raise JobStopped if the job was cancelled; else hold its row (FOR SHARE) until the
    caller's transaction ends, so a cancel (which locks the row FOR UPDATE) waits for the
    verdicts being saved and no verdict is ever written after a cancel committed."""
    with connection.cursor() as cursor:
        cursor.execute(_JOB_WANTED, [job.pk])
        row = cursor.fetchone()
    if row is None or row[0]:
        raise JobStopped


def _save(
    job: JudgeJob,
    judge: Judge,
    prompt_version: str,
    todo: list[_Todo],
    fields: list[dict[str, Any]],
    items: dict[int, tuple[SampleRow, ModelResponse | None]],
) -> None:
    new = []
    with transaction.atomic():
        _still_wanted(job)
        for t, values in zip(todo, fields, strict=True):
            sample, response = items[t.item_id]
            if t.retry_of is not None:
                reset: dict[str, Any] = {
                    name: None if name in _NULLABLE else "" for name in _RESETTABLE
                }
                # Only an error row is replaced: a verdict that arrived meanwhile stays.
                reset["attempts"] = 1
                Verdict.objects.filter(pk=t.retry_of).exclude(error_kind="").update(
                    **(reset | values), job=job
                )
                continue
            new.append(
                Verdict(
                    judge=judge,
                    task=job.task,
                    prompt_version=prompt_version,
                    repeat=t.repeat,
                    sample=sample,
                    response=response,
                    job=job,
                    **values,
                )
            )
        Verdict.objects.bulk_create(new, batch_size=500, ignore_conflicts=True)


def _store_failed(fields: dict[str, Any]) -> bool:
    return fields.get("error_kind") == "unexpected" and str(fields.get("error", "")).startswith(
        _store_errors()
    )


def judge_chunk_items(chunk: JudgeJobChunk, job: JudgeJob, judge: Judge) -> int:
    """Judge the items of a one-judge chunk still lacking a verdict; how many were judged."""
    prompt_version = (
        JudgeJobJudge.objects.filter(job=job, judge=judge)
        .values_list("prompt_version", flat=True)
        .first()
    ) or prompt_version_of(judge)
    todo = _todo(chunk.item_ids, judge.pk, job, prompt_version)
    if not todo:
        return 0
    items = _load_items(job, judge, {t.item_id for t in todo})
    todo = [t for t in todo if t.item_id in items]  # items deleted since planning
    fields = _outcomes(job, judge, todo, items)
    kept = [(t, f) for t, f in zip(todo, fields, strict=True) if not _store_failed(f)]
    _save(job, judge, prompt_version, [t for t, _f in kept], [f for _t, f in kept], items)
    if len(kept) < len(todo):
        raise SharedStoreUnavailable(
            f"{len(todo) - len(kept)} calls could not reach the rate-limit store (Redis)"
        )
    return len(todo)
