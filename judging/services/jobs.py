"""Judge jobs: start, plan into chunks, run a chunk, finish (with consensus), cancel.

Every step is safe to run twice: chunks are rows with a unique (job, judge, index), verdicts
have a unique (judge, item, task, prompt version, repeat) and are inserted with ON CONFLICT DO
NOTHING, so a redelivered task only fills what is still missing.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import services as annotation_services
from annotation.models import (
    Dataset,
    DatasetKind,
    JobStatus,
    NoteKey,
    SampleMedia,
    SampleStatus,
    TaxonomyTerm,
    TermKind,
)
from annotation.models import Sample as SampleRow
from core.tasks import enqueue
from judging import rule_judge
from judging.consensus import Vote, consensus_all, sample_answerability
from judging.execution import Call, EndpointSpec, JudgeRunner
from judging.extraction import is_refusal_reference
from judging.llm_client import JudgeOutcome, RetryPolicy
from judging.llm_output import AnswerabilityOutput, SafetyOutput, ScoringOutput
from judging.models import (
    CHUNK_FINISHED,
    SCORING_TASKS,
    ChunkStatus,
    Judge,
    JudgeJob,
    JudgeJobChunk,
    JudgeJobJudge,
    JudgeKind,
    JudgeTask,
    ModelResponse,
    Verdict,
)
from judging.prompts import PROMPTS
from judging.services.items import answerability_messages, rule_sample, scoring_messages
from judging.services.judges import judge_allowed_hosts, judge_api_key, judge_base_url

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

MAX_REPEATS = 20
RULE_CHUNK = 500
JOB_TASKS = {"answerability": JudgeTask.ANSWERABILITY, "scoring": None}


def job_task_for(dataset: Dataset, task: str) -> str:
    """Map "answerability" / "scoring" (or a JudgeTask value) to the task for this dataset."""
    if task == "scoring":
        if dataset.kind == DatasetKind.TRIMODAL:
            return JudgeTask.MCBENCH_SAFETY
        return JudgeTask.MMOOC_SCORING
    if task not in JudgeTask.values:
        raise ValidationError(
            {
                "task": [
                    _("Unknown task “%(task)s” (known: answerability, scoring).") % {"task": task}
                ]
            }
        )
    return task


def _prompt_version(judge: Judge) -> str:
    return "rule" if judge.kind == JudgeKind.RULE else judge.prompt_version


def _check_start(
    dataset: Dataset, task: str, judges: Sequence[Judge], repeats: int, model_names: Sequence[str]
) -> None:
    errors: dict[str, list[str]] = defaultdict(list)
    if not judges:
        errors["judges"].append(_("Choose at least one judge."))
    if len({j.pk for j in judges}) != len(judges):
        errors["judges"].append(_("A judge is named twice."))
    if not 1 <= repeats <= MAX_REPEATS:
        errors["repeats"].append(
            _("Votes per item must lie between 1 and %(max)s.") % {"max": MAX_REPEATS}
        )
    for judge in judges:
        if not judge.enabled:
            errors["judges"].append(_("Judge %(name)s is disabled.") % {"name": judge.name})
        if judge.kind == JudgeKind.EXTERNAL:
            errors["judges"].append(
                _("Judge %(name)s only holds imported verdicts and cannot be run.")
                % {"name": judge.name}
            )
        if judge.kind == JudgeKind.OPENAI and (task, judge.prompt_version) not in PROMPTS:
            errors["judges"].append(
                _("Judge %(name)s's prompt version %(version)s has no %(task)s prompt.")
                % {"name": judge.name, "version": judge.prompt_version, "task": task}
            )
        if repeats > 1 and (judge.kind == JudgeKind.RULE or judge.temperature <= 0):
            errors["repeats"].append(
                _("Repeated votes need a temperature above 0; judge %(name)s is deterministic.")
                % {"name": judge.name}
            )
    if task == JudgeTask.ANSWERABILITY and dataset.kind != DatasetKind.IMAGE_QUESTION:
        errors["task"].append(_("Answerability applies to image-question datasets only."))
    if task in SCORING_TASKS:
        responses = ModelResponse.objects.filter(dataset=dataset)
        if model_names:
            responses = responses.filter(model_name__in=model_names)
        if not responses.exists():
            errors["task"].append(_("The dataset has no model responses to score."))
    if errors:
        raise ValidationError(dict(errors))


@transaction.atomic
def judge_job_start(
    *,
    dataset: Dataset,
    task: str,
    judges: Sequence[Judge],
    repeats: int = 1,
    model_names: Sequence[str] = (),
    chunk_size: int = 50,
    by: User | None = None,
) -> JudgeJob:
    """Create a job and queue its planning once committed; ValidationError explains refusals."""
    task = job_task_for(dataset, task)
    _check_start(dataset, task, judges, repeats, model_names)
    job = JudgeJob.objects.create(
        dataset=dataset,
        task=task,
        repeats=repeats,
        model_names=sorted(set(model_names)),
        chunk_size=max(1, chunk_size),
        created_by=by,
    )
    JudgeJobJudge.objects.bulk_create(
        JudgeJobJudge(job=job, judge=judge, prompt_version=_prompt_version(judge))
        for judge in judges
    )
    transaction.on_commit(lambda: enqueue("judging.plan_judge_job", job.pk))
    return job


def _item_ids(job: JudgeJob) -> list[int]:
    if job.task in SCORING_TASKS:
        responses = ModelResponse.objects.filter(dataset_id=job.dataset_id).exclude(
            sample__status=SampleStatus.REMOVED
        )
        if job.model_names:
            responses = responses.filter(model_name__in=job.model_names)
        return list(responses.order_by("id").values_list("id", flat=True))
    samples = SampleRow.objects.filter(dataset_id=job.dataset_id).exclude(
        status=SampleStatus.REMOVED
    )
    return list(samples.order_by("id").values_list("id", flat=True))


def _chunk_size(job: JudgeJob, judge: Judge) -> int:
    """A whole number of concurrency windows, so no slot idles at a chunk's end."""
    if judge.kind == JudgeKind.RULE:
        return RULE_CHUNK
    return math.ceil(job.chunk_size / judge.max_concurrency) * judge.max_concurrency


def _scope(job: JudgeJob, job_judge: JudgeJobJudge) -> Q:
    scope = Q(judge_id=job_judge.judge_id, task=job.task, prompt_version=job_judge.prompt_version)
    scope &= Q(repeat__lt=job.repeats)
    if job.task in SCORING_TASKS:
        scope &= Q(response__dataset_id=job.dataset_id)
        if job.model_names:
            scope &= Q(response__model_name__in=job.model_names)
    else:
        scope &= Q(sample__dataset_id=job.dataset_id, response__isnull=True)
    return scope


def judge_job_plan(*, job_id: int) -> None:
    """Split the job into chunks (once) and queue every chunk not yet finished."""
    with transaction.atomic():
        job = JudgeJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.is_finished:
            return
        if job.cancel_requested:
            _finish(job)
            return
        job_judges = list(job.job_judges.select_related("judge"))
        items = _item_ids(job)
        if not job.chunks.exists():
            chunks = []
            for job_judge in job_judges:
                size = _chunk_size(job, job_judge.judge)
                for index, start in enumerate(range(0, len(items), size)):
                    chunks.append(
                        JudgeJobChunk(
                            job=job,
                            judge=job_judge.judge,
                            index=index,
                            item_ids=items[start : start + size],
                        )
                    )
            # Interleave judges so that every judge advances from the start.
            chunks.sort(key=lambda c: (c.index, c.judge_id))
            JudgeJobChunk.objects.bulk_create(chunks, ignore_conflicts=True)
            present = Q(pk__in=[])
            for job_judge in job_judges:
                present |= _scope(job, job_judge)
            job.preexisting = (
                Verdict.objects.filter(present, error_kind="").exclude(job=job).count()
            )
            job.total = len(items) * len(job_judges) * job.repeats
            job.status = JobStatus.RUNNING
            job.started_at = timezone.now()
            job.rate_limit_scope = "redis" if settings.REDIS_URL else "process"
            if not settings.REDIS_URL:
                job.message = _(
                    "No Redis is configured: rate limits hold within each worker process only."
                )
            job.save()
        pending = list(
            job.chunks.exclude(status__in=CHUNK_FINISHED)
            .order_by("index", "judge_id")
            .values_list("pk", flat=True)
        )
        if not pending:
            _finish(job)
            return
        transaction.on_commit(lambda: _enqueue_chunks(pending))


@dataclass
class _Todo:
    item_id: int
    repeat: int
    retry_of: int | None  # pk of an error verdict from an earlier job, replaced on success


def _todo(chunk: JudgeJobChunk, job: JudgeJob, prompt_version: str) -> list[_Todo]:
    field = "response_id" if job.task in SCORING_TASKS else "sample_id"
    existing = Verdict.objects.filter(
        judge_id=chunk.judge_id,
        task=job.task,
        prompt_version=prompt_version,
        repeat__lt=job.repeats,
        **{f"{field}__in": chunk.item_ids},
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
    for item in chunk.item_ids:
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
        return {
            "label": "answerable" if a.answerable else "unanswerable",
            "category": a.category or "",
            "rationale": a.rationale,
        }
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
    job: JudgeJob, judge: Judge, ids: set[int]
) -> dict[int, tuple[SampleRow, ModelResponse | None]]:
    if job.task in SCORING_TASKS:
        responses = ModelResponse.objects.filter(pk__in=ids).select_related("sample")
        return {r.pk: (r.sample, r) for r in responses}
    samples = SampleRow.objects.filter(pk__in=ids)
    if judge.kind == JudgeKind.OPENAI and not judge.text_only:
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
        # A configuration error is recorded on every item, so the job ends and says why.
        return [{"error_kind": "config", "error": str(exc), "attempts": 0} for _t in todo]
    categories = _categories(job.dataset_id) if job.task == JudgeTask.ANSWERABILITY else []
    calls = []
    for t in todo:
        sample, response = items[t.item_id]
        if response is None:
            messages = answerability_messages(judge, sample, categories)
        else:
            messages = scoring_messages(judge, job.task, response)
        calls.append(Call((t.item_id, t.repeat), messages))
    runner = JudgeRunner.for_process(settings.REDIS_URL)
    outcomes = runner.run(spec, calls, job.task)
    return [_verdict_fields(job.task, outcome) for outcome in outcomes]


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


def judge_chunk_run(*, chunk_id: int) -> int:
    """Judge the items of one chunk that still lack a verdict; returns how many were judged."""
    chunk = JudgeJobChunk.objects.select_related("job", "judge").filter(pk=chunk_id).first()
    if chunk is None or chunk.status in CHUNK_FINISHED:
        return 0
    job, judge = chunk.job, chunk.judge
    if job.cancel_requested or job.is_finished:
        JudgeJobChunk.objects.filter(pk=chunk.pk).update(
            status=ChunkStatus.CANCELLED, finished_at=timezone.now()
        )
        judge_job_finish_if_done(job_id=job.pk)
        return 0
    JudgeJobChunk.objects.filter(pk=chunk.pk).update(
        status=ChunkStatus.RUNNING, attempts=chunk.attempts + 1, started_at=timezone.now()
    )
    prompt_version = (
        JudgeJobJudge.objects.filter(job=job, judge=judge)
        .values_list("prompt_version", flat=True)
        .first()
    ) or _prompt_version(judge)
    todo = _todo(chunk, job, prompt_version)
    if todo:
        items = _load_items(job, judge, {t.item_id for t in todo})
        todo = [t for t in todo if t.item_id in items]  # items deleted since planning
        fields = _outcomes(job, judge, todo, items)
        _save(job, judge, prompt_version, todo, fields, items)
    JudgeJobChunk.objects.filter(pk=chunk.pk).update(
        status=ChunkStatus.DONE, finished_at=timezone.now()
    )
    judge_job_finish_if_done(job_id=job.pk)
    return len(todo)


def judge_chunk_fail(*, chunk_id: int, message: str) -> None:
    """Record a chunk whose task gave up, so the job can still end (as failed)."""
    chunk = JudgeJobChunk.objects.filter(pk=chunk_id).first()
    if chunk is None:
        return
    JudgeJobChunk.objects.filter(pk=chunk_id).exclude(status__in=CHUNK_FINISHED).update(
        status=ChunkStatus.FAILED, message=message[:2000], finished_at=timezone.now()
    )
    judge_job_finish_if_done(job_id=chunk.job_id)


def judge_job_finish_if_done(*, job_id: int) -> None:
    """End the job once every chunk has finished; runs the consensus for answerability."""
    with transaction.atomic():
        job = JudgeJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.is_finished or job.status == JobStatus.QUEUED:
            return
        if job.chunks.exclude(status__in=CHUNK_FINISHED).exists():
            return
        _finish(job)


def _finish(job: JudgeJob) -> None:
    if job.cancel_requested:
        job.status = JobStatus.CANCELLED
    elif job.chunks.filter(status=ChunkStatus.FAILED).exists():
        job.status = JobStatus.FAILED
        job.message = _("Some chunks failed after their retries; run the job again to resume.")
    else:
        job.status = JobStatus.SUCCEEDED
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "message", "finished_at"])
    if job.task == JudgeTask.ANSWERABILITY and job.status == JobStatus.SUCCEEDED:
        judge_job_apply_consensus(job=job)


def judge_job_apply_consensus(*, job: JudgeJob) -> dict[str, int]:
    """Flag samples on which any judge disagrees with the sample's label; note every vote."""
    job_judges = list(job.job_judges.select_related("judge").order_by("judge__name"))
    names = [jj.judge.name for jj in job_judges]
    samples = SampleRow.objects.filter(dataset_id=job.dataset_id).exclude(
        status=SampleStatus.REMOVED
    )
    labels = {
        pk: sample_answerability(group, is_refusal_reference(reference))
        for pk, group, reference in samples.values_list(
            "pk", "answerability_group", "reference_answer"
        )
    }
    scope = Q(pk__in=[])
    for jj in job_judges:
        scope |= _scope(job, jj)
    votes: dict[int, list[Vote]] = defaultdict(list)
    for sample_id, judge_name, label, category in Verdict.objects.filter(scope).values_list(
        "sample_id", "judge__name", "label", "category"
    ):
        votes[sample_id].append(Vote(judge_name, label or None, category or None))
    results = consensus_all(labels, votes, names)
    agree = [pk for pk, result in results.items() if result.agree]
    disagree = [pk for pk, result in results.items() if not result.agree]
    annotation_services.sample_flag_judges(sample_ids=disagree, disagree=True)
    annotation_services.sample_flag_judges(sample_ids=agree, disagree=False)
    annotation_services.sample_set_note(
        sample_ids=list(results),
        key=NoteKey.JUDGE_VOTES,
        values={pk: result.votes for pk, result in results.items()},
    )
    return {"agree": len(agree), "disagree": len(disagree)}


def judge_job_cancel(*, job: JudgeJob) -> JudgeJob:
    """Ask the job to stop: chunks not yet started are skipped; running ones finish."""
    with transaction.atomic():
        locked = JudgeJob.objects.select_for_update().get(pk=job.pk)
        if locked.is_finished:
            raise ValidationError(_("The job has already finished."))
        locked.cancel_requested = True
        locked.save(update_fields=["cancel_requested"])
        if (
            locked.status == JobStatus.QUEUED
            or not locked.chunks.exclude(status__in=CHUNK_FINISHED).exists()
        ):
            _finish(locked)
    job.refresh_from_db()
    return job


def judge_job_resume(*, job: JudgeJob) -> JudgeJob:
    """Queue again every chunk of an unfinished job that is not done (after lost workers)."""
    if job.is_finished:
        raise ValidationError(_("The job has already finished."))
    transaction.on_commit(lambda: enqueue("judging.plan_judge_job", job.pk))
    return job


def _enqueue_chunks(chunk_ids: list[int]) -> None:
    for chunk_id in chunk_ids:
        enqueue("judging.run_judge_chunk", chunk_id)
