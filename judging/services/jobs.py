"""Judge jobs: start, plan into chunks, finish (with consensus).

A chunk's work is in ``chunks``; cancel, retry and the recovery sweep in ``recovery``. Every
step is safe to run twice: chunks are rows with a unique (job, judge, index), verdicts have a
unique (judge, item, task, prompt version, repeat) and are inserted with ON CONFLICT DO
NOTHING, so a redelivered task only fills what is still missing.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import extensions as annotation_extensions
from annotation import services as annotation_services
from annotation.models import (
    Dataset,
    DatasetKind,
    JobStatus,
    NoteKey,
    SampleStatus,
    WebhookEvent,
)
from annotation.models import Sample as SampleRow
from annotation.webhooks.services import webhook_event_emit
from core.jobs import gave_up_message, job_enqueue, job_send_queued
from core.tasks import enqueue
from judging import models
from judging.audit import computations
from judging.consensus import Vote, consensus_all, sample_answerability
from judging.models import (
    CHUNK_FINISHED,
    SCORING_TASKS,
    ChunkStatus,
    Judge,
    JudgeJob,
    JudgeJobStatus,
    JudgeKind,
    JudgeTask,
    ModelResponse,
    Verdict,
)
from judging.prompts import PROMPTS
from judging.services.checks import judges_preflight
from judging.services.judges import judge_problems

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


def prompt_version_of(judge: Judge) -> str:
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
        for problem in judge_problems(judge) if judge.kind == JudgeKind.OPENAI else []:
            errors["judges"].append(
                _("Judge %(name)s cannot be called: %(problem)s")
                % {"name": judge.name, "problem": problem}
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
    models.JudgeJobJudge.objects.bulk_create(
        models.JudgeJobJudge(job=job, judge=judge, prompt_version=prompt_version_of(judge))
        for judge in judges
    )
    transaction.on_commit(lambda: enqueue_plan(job.pk))
    return job


def enqueue_plan(job_id: int) -> None:
    """Send a job's planning task; while the broker is down the job waits, saying so."""
    job_enqueue(JudgeJob, job_id, lambda: enqueue("judging.plan_judge_job", job_id))


def _plan_attempt(job_id: int) -> bool:
    """Count an attempt at planning a queued job; False (and failed) when none is left."""
    with transaction.atomic():
        row = (
            JudgeJob.objects.select_for_update()
            .filter(pk=job_id)
            .values("status", "attempts", "message")
            .first()
        )
        if row is None:
            return False
        if row["status"] != JobStatus.QUEUED:
            return True
        if row["attempts"] >= settings.JOB_MAX_ATTEMPTS:
            JudgeJob.objects.filter(pk=job_id).update(
                status=JobStatus.FAILED,
                message=gave_up_message(row["attempts"], row["message"]),
                finished_at=timezone.now(),
            )
            return False
        JudgeJob.objects.filter(pk=job_id).update(attempts=F("attempts") + 1, message="")
    return True


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


def _plan_chunks(
    job: JudgeJob, job_judges: Sequence[models.JudgeJobJudge], items: list[int]
) -> list[models.JudgeJobChunk]:
    """The rule judge's items in batches of RULE_CHUNK; the endpoint judges' items in lanes.

    Lanes run every endpoint judge over their items, a call starting as soon as one ends:
    JUDGE_JOB_LANES of them (one per worker process), more when the job has more than
    JUDGE_LANE_ITEMS items a lane.
    """
    chunks = [
        models.JudgeJobChunk(
            job=job, judge=jj.judge, index=index, item_ids=items[start : start + RULE_CHUNK]
        )
        for jj in job_judges
        if jj.judge.kind == JudgeKind.RULE
        for index, start in enumerate(range(0, len(items), RULE_CHUNK))
    ]
    if items and any(jj.judge.kind != JudgeKind.RULE for jj in job_judges):
        count = max(settings.JUDGE_JOB_LANES, math.ceil(len(items) / settings.JUDGE_LANE_ITEMS))
        size = math.ceil(len(items) / min(count, len(items)))
        chunks += [
            models.JudgeJobChunk(
                job=job, judge=None, index=index, item_ids=items[start : start + size]
            )
            for index, start in enumerate(range(0, len(items), size))
        ]
    # Lanes first (they take the longest), then the rule judge's batches.
    chunks.sort(key=lambda c: (c.judge_id is not None, c.index, c.judge_id or 0))
    return chunks


def _scope(job: JudgeJob, job_judge: models.JudgeJobJudge) -> Q:
    scope = Q(judge_id=job_judge.judge_id, task=job.task, prompt_version=job_judge.prompt_version)
    scope &= Q(repeat__lt=job.repeats)
    if job.task in SCORING_TASKS:
        scope &= Q(response__dataset_id=job.dataset_id)
        if job.model_names:
            scope &= Q(response__model_name__in=job.model_names)
    else:
        scope &= Q(sample__dataset_id=job.dataset_id, response__isnull=True)
    return scope


def _preflight_refused(job_id: int) -> bool:
    """Before a job's first plan, test each of its endpoint judges once; when one cannot
    answer, the job does not start: it fails with every judge's reason (True)."""
    job = JudgeJob.objects.filter(pk=job_id, status=JobStatus.QUEUED).first()
    if job is None or job.chunks.exists():
        return False
    problems = judges_preflight([jj.judge for jj in job.job_judges.select_related("judge")])
    if not problems:
        return False
    message = _(
        "The job did not start: %(problems)s Change the judge or its worker's settings, test "
        "it on the judges page, then press Retry."
    ) % {"problems": " ".join(f"{p.rstrip('.')}." for p in problems)}
    JudgeJob.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(
        status=JobStatus.FAILED, message=message, finished_at=timezone.now()
    )
    return True


def judge_job_plan(*, job_id: int) -> None:
    """Check the judges (before the first plan), split the job into chunks (once) and queue
    every chunk not yet finished."""
    if not _plan_attempt(job_id) or _preflight_refused(job_id):
        return
    with transaction.atomic():
        job = JudgeJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.is_finished:
            return
        if job.cancel_requested:
            judge_job_end(job=job)
            return
        job_judges = list(job.job_judges.select_related("judge"))
        items = _item_ids(job)
        if not job.chunks.exists():
            models.JudgeJobChunk.objects.bulk_create(_plan_chunks(job, job_judges, items))
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
            .order_by(F("judge_id").asc(nulls_first=True), "index")
            .values_list("pk", flat=True)
        )
        if not pending:
            judge_job_end(job=job)
            return
        transaction.on_commit(lambda: send_chunks(pending))


def send_chunks(chunk_ids: Sequence[int]) -> None:
    """Send the chunks' tasks; one the broker does not take is sent again by the sweep."""
    for pk in chunk_ids:
        send = partial(enqueue, "judging.run_judge_chunk", pk)
        job_send_queued(models.JudgeJobChunk, pk, send)


def judge_job_finish_if_done(*, job_id: int) -> None:
    """End the job once every chunk has finished; runs the consensus for answerability."""
    with transaction.atomic():
        job = JudgeJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.is_finished or job.status == JobStatus.QUEUED:
            return
        if job.chunks.exclude(status__in=CHUNK_FINISHED).exists():
            return
        judge_job_end(job=job)


def _error_summary(job: JudgeJob) -> tuple[int, int, str]:
    """(calls made, calls failed, "kind: n, …") of a job's own verdicts."""
    verdicts = Verdict.objects.filter(job=job)
    counts = verdicts.aggregate(made=Count("id"), errors=Count("id", filter=~Q(error_kind="")))
    kinds = (
        verdicts.exclude(error_kind="")
        .values_list("error_kind")
        .annotate(n=Count("id"))
        .order_by("-n", "error_kind")
        .values_list("error_kind", "n")
    )
    return counts["made"], counts["errors"], ", ".join(f"{kind} {n}" for kind, n in kinds)


def judge_job_end(*, job: JudgeJob) -> None:
    """Record the end of a job whose chunks have all ended (the caller holds its row lock).

    The state tells the truth: "failed" when a chunk was given up or every call failed,
    "finished with errors" when some calls failed, "succeeded" only when none did.
    """
    job.message = ""
    if job.cancel_requested:
        job.status = JudgeJobStatus.CANCELLED
    elif (
        reason := job.chunks.filter(status=ChunkStatus.FAILED)
        .values_list("message", flat=True)
        .first()
    ) is not None:
        job.status = JudgeJobStatus.FAILED
        job.message = _(
            "Some chunks failed after their retries (%(reason)s). Press Retry to run them again."
        ) % {"reason": reason or _("no reason recorded")}
    elif (summary := _error_summary(job))[1] and summary[1] == summary[0]:
        job.status = JudgeJobStatus.FAILED
        job.message = _("Every call failed (%(errors)s): %(kinds)s.") % {
            "errors": summary[1],
            "kinds": summary[2],
        }
    elif summary[1]:
        job.status = JudgeJobStatus.WITH_ERRORS
        job.message = _("%(errors)s of %(made)s calls failed: %(kinds)s.") % {
            "errors": summary[1],
            "made": summary[0],
            "kinds": summary[2],
        }
    else:
        job.status = JudgeJobStatus.SUCCEEDED
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "message", "finished_at"])
    webhook_event_emit(
        event=WebhookEvent.JUDGE_JOB_FINISHED,
        dataset=job.dataset_id,
        data={
            "judge_job": {
                "id": job.pk,
                "task": job.task,
                "status": job.status,
                "message": job.message,
                "judges": sorted(job.job_judges.values_list("judge__name", flat=True)),
                "verdicts_wanted": job.total,
            }
        },
    )
    # Whatever the ending, the verdicts it made count: the frames and audit figures follow.
    computations.dataset_figures_request(dataset_id=job.dataset_id, judge_tasks=[job.task])
    if job.task == JudgeTask.ANSWERABILITY and job.status in (
        JudgeJobStatus.SUCCEEDED,
        JudgeJobStatus.WITH_ERRORS,
    ):
        judge_job_apply_consensus(job=job)


def judge_job_apply_consensus(*, job: JudgeJob) -> dict[str, int]:
    """Flag samples on which any judge disagrees with the sample's label; note every vote.

    Abstentions are no votes: a sample on which every judge abstained is left unflagged and
    counted as undecided, not as agreed."""
    job_judges = list(job.job_judges.select_related("judge").order_by("judge__name"))
    names = [jj.judge.name for jj in job_judges]
    samples = SampleRow.objects.filter(dataset_id=job.dataset_id).exclude(
        status=SampleStatus.REMOVED
    )
    answerability = {
        pk: sample_answerability(group, reference)
        for pk, group, reference in samples.values_list(
            "pk", "answerability_group", "reference_answer"
        )
    }
    labels = {pk: found.label for pk, found in answerability.items()}
    annotation_services.sample_mark_inferred_answerability(
        groups={pk: found.group if found.inferred else "" for pk, found in answerability.items()}
    )
    # Every judge's latest verdict for the task counts, whichever job made it: a job with
    # fewer judges (the rule judge alone) never erases another judge's stored vote.
    latest = (
        Verdict.objects.filter(
            task=job.task, sample__dataset_id=job.dataset_id, response__isnull=True
        )
        .order_by("sample_id", "judge_id", "repeat", "-id")
        .distinct("sample_id", "judge_id", "repeat")
    )
    votes: dict[int, list[Vote]] = defaultdict(list)
    for sample_id, judge_name, label, category in latest.values_list(
        "sample_id", "judge__name", "label", "category"
    ):
        if judge_name not in names:
            names.append(judge_name)
        votes[sample_id].append(Vote(judge_name, label or None, category or None))
    names.sort()
    results = consensus_all(labels, votes, names)
    disagree = [pk for pk, result in results.items() if result.disagree]
    agreed = [pk for pk, result in results.items() if result.agree and not result.disagree]
    undecided = [pk for pk, result in results.items() if not (result.agree or result.disagree)]
    annotation_services.sample_flag_judges(sample_ids=disagree, disagree=True)
    annotation_services.sample_flag_judges(sample_ids=agreed, disagree=False)
    annotation_services.sample_flag_judges(sample_ids=undecided, disagree=None)
    # The queue serves by the latest votes, not by a copy made when it was opened.
    annotation_extensions.review_queue_refresh(dataset_id=job.dataset_id)
    annotation_services.sample_set_note(
        sample_ids=list(results),
        key=NoteKey.JUDGE_VOTES,
        values={pk: result.votes for pk, result in results.items()},
    )
    return {
        "agree": sum(1 for result in results.values() if result.agree),
        "disagree": len(disagree),
        "undecided": sum(1 for result in results.values() if result.undecided),
    }
