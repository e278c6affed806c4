"""Reads of the judging app: judges, jobs and their live progress, the leaderboard."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Exists, Max, OuterRef, Prefetch, Q, QuerySet, Subquery, Sum
from django.utils import timezone

from annotation.models import Dataset, DatasetKind, Sample
from annotation.selectors import dataset_list_visible, taxonomy_view
from judging.consensus import Consensus, Vote, consensus, sample_answerability
from judging.leaderboard import (
    UNGROUPED,
    Cell,
    CellSums,
    ModelRow,
    ScoreRow,
    build_leaderboard,
    leaderboard_from_sums,
    verdict_score,
)
from judging.leaderboard_store import leaderboard_ensure, leaderboard_task
from judging.models import (
    JUDGE_JOB_RETRYABLE,
    AuditRating,
    ChunkStatus,
    Judge,
    JudgeCheck,
    JudgeJob,
    JudgeJobJudge,
    JudgeTask,
    LeaderboardCell,
    ModelResponse,
    Verdict,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

    AnyUser = User | AnonymousUser


def judge_list() -> QuerySet[Judge]:
    return Judge.objects.order_by("name")


@dataclass(frozen=True)
class JudgeRow:
    """A judge on the judges page: whether it has verdicts (then it cannot be deleted) and
    its latest test."""

    judge: Judge
    has_verdicts: bool
    last_check: JudgeCheck | None


def judge_rows() -> list[JudgeRow]:
    """Every judge with its latest test, in two queries."""
    judges = list(
        Judge.objects.annotate(
            has_verdicts=Exists(Verdict.objects.filter(judge=OuterRef("pk"), error_kind="")),
            last_check_id=Subquery(
                JudgeCheck.objects.filter(judge=OuterRef("pk"))
                .order_by("-created_at", "-id")
                .values("id")[:1]
            ),
        ).order_by("name")
    )
    wanted = [j.last_check_id for j in judges if j.last_check_id]
    checks = JudgeCheck.objects.in_bulk(wanted) if wanted else {}
    return [
        JudgeRow(
            judge=j,
            has_verdicts=j.has_verdicts,
            last_check=checks.get(j.last_check_id),
        )
        for j in judges
    ]


def judge_check_get(*, check_id: int) -> JudgeCheck | None:
    return JudgeCheck.objects.select_related("judge").filter(pk=check_id).first()


def judges_by_names(names: list[str]) -> tuple[list[Judge], list[str]]:
    """The judges with these names, in order, and the names that match none."""
    found = {j.name: j for j in Judge.objects.filter(name__in=names)}
    return [found[n] for n in names if n in found], [n for n in names if n not in found]


def _jobs() -> QuerySet[JudgeJob]:
    return (
        JudgeJob.objects.select_related("dataset", "created_by")
        .prefetch_related(
            Prefetch("job_judges", queryset=JudgeJobJudge.objects.select_related("judge"))
        )
        .order_by("-created_at", "-id")
    )


def job_list(*, dataset: Dataset) -> QuerySet[JudgeJob]:
    """A dataset's jobs, newest first, with their judges (three queries for any page)."""
    return _jobs().filter(dataset=dataset)


def job_get_visible(*, user: AnyUser, job_id: int) -> JudgeJob | None:
    return _jobs().filter(pk=job_id, dataset__in=dataset_list_visible(user=user)).first()


def response_models(*, dataset: Dataset) -> list[tuple[str, int]]:
    """The evaluated models of a dataset with their number of responses."""
    return list(
        ModelResponse.objects.filter(dataset=dataset)
        .values_list("model_name")
        .annotate(n=Count("id"))
        .order_by("model_name")
        .values_list("model_name", "n")
    )


@dataclass(frozen=True)
class JobProgress:
    """What the job page shows live."""

    id: int
    status: str
    status_label: str
    task: str
    total: int
    done: int  # calls ended, failed ones too (what the bar shows)
    verdicts: int  # of those, the ones that gave a verdict
    made: int
    errors: int
    preexisting: int
    percent: float
    chunks_total: int
    chunks_done: int
    chunks_failed: int
    prompt_tokens: int
    completion_tokens: int
    verdicts_per_second: float | None
    elapsed_seconds: float | None
    cancel_requested: bool
    rate_limit_scope: str
    message: str
    error_kinds: dict[str, int]
    finished: bool
    # Whether the job may be retried (the page shows its Retry form to leads).
    can_retry: bool
    # Failed calls per judge and kind: [{"judge", "kind", "n"}], by judge then kind.
    error_counts: list[dict[str, Any]]
    # The latest failed calls: [{"judge", "item", "kind", "error"}], newest first.
    recent_errors: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _error_counts(verdicts: QuerySet[Verdict]) -> list[tuple[int, str, str, int]]:
    """(job id, judge name, error kind, n) of the failed calls among the verdicts."""
    return list(
        verdicts.exclude(error_kind="")
        .values_list("job_id", "judge__name", "error_kind")
        .annotate(n=Count("id"))
        .order_by("job_id", "judge__name", "error_kind")
        .values_list("job_id", "judge__name", "error_kind", "n")
    )


def job_error_counts(*, job_ids: list[int]) -> dict[int, dict[str, dict[str, int]]]:
    """Per job, its failed calls per judge and per error kind (one query for any list)."""
    counts: dict[int, dict[str, dict[str, int]]] = {}
    for job_id, judge, kind, n in _error_counts(Verdict.objects.filter(job_id__in=job_ids)):
        counts.setdefault(job_id, {}).setdefault(judge, {})[kind] = n
    return counts


def job_progress(*, job: JudgeJob) -> JobProgress:
    """Live progress of a job, from the verdicts themselves (never a counter that can drift)."""
    verdicts = Verdict.objects.filter(job=job)
    totals = verdicts.aggregate(
        made=Count("id"),
        errors=Count("id", filter=~Q(error_kind="")),
        prompt=Sum("prompt_tokens"),
        completion=Sum("completion_tokens"),
        last=Max("created_at"),
    )
    counts = _error_counts(verdicts)
    kinds: dict[str, int] = {}
    for _job, _judge, kind, n in counts:
        kinds[kind] = kinds.get(kind, 0) + n
    chunks = job.chunks.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(status=ChunkStatus.DONE)),
        failed=Count("id", filter=Q(status=ChunkStatus.FAILED)),
    )
    made = totals["made"] or 0
    done = min(job.total, made + job.preexisting) if job.total else made
    elapsed = None
    rate = None
    if job.started_at:
        end = job.finished_at or timezone.now()
        elapsed = max((end - job.started_at).total_seconds(), 0.0)
        if made and elapsed > 0:
            rate = round(made / elapsed, 2)
    return JobProgress(
        id=job.pk,
        status=job.status,
        status_label=str(job.get_status_display()),
        task=job.task,
        total=job.total,
        done=done,
        verdicts=max(done - (totals["errors"] or 0), 0),
        made=made,
        errors=totals["errors"] or 0,
        preexisting=job.preexisting,
        percent=round(100 * done / job.total, 1) if job.total else 0.0,
        chunks_total=chunks["total"] or 0,
        chunks_done=chunks["done"] or 0,
        chunks_failed=chunks["failed"] or 0,
        prompt_tokens=totals["prompt"] or 0,
        completion_tokens=totals["completion"] or 0,
        verdicts_per_second=rate,
        elapsed_seconds=round(elapsed, 1) if elapsed is not None else None,
        cancel_requested=job.cancel_requested,
        rate_limit_scope=job.rate_limit_scope,
        message=job.message,
        error_kinds=kinds,
        finished=job.is_finished,
        can_retry=job.status in JUDGE_JOB_RETRYABLE,
        error_counts=[{"judge": j, "kind": k, "n": n} for _job, j, k, n in counts],
        recent_errors=[
            {
                "judge": v.judge.name,
                "item": v.sample.external_id,
                "kind": v.error_kind,
                "error": v.error[:200],
            }
            for v in job_recent_errors(job=job)
        ],
    )


def job_recent_errors(*, job: JudgeJob, limit: int = 20) -> QuerySet[Verdict]:
    return (
        Verdict.objects.filter(job=job)
        .exclude(error_kind="")
        .select_related("judge", "sample")
        .only("judge__name", "sample__external_id", "error_kind", "error")
        .order_by("-id")[:limit]
    )


@dataclass
class Leaderboard:
    """Per evaluated model, the ensemble's and each judge's scores, with the groups shown;
    ``prompt_version`` is the version it is filtered to (None: every version counts), and
    ``prompt_versions`` every version the dataset's verdicts were made with. The figures are
    the kept aggregates' (``judging.leaderboard_store``): ``computed_at`` is the time of the
    data they reflect, ``computing`` says a newer computation is on its way and
    ``pending_since`` since when changes wait to be counted."""

    task: str
    groups: list[str]
    judges: list[str]
    models: list[ModelRow]
    prompt_versions: list[str] = field(default_factory=list)
    prompt_version: str | None = None
    # Scored responses whose sample is rejected or taken down: never counted.
    left_out_responses: int = 0
    computed_at: datetime | None = None
    computing: bool = False
    pending_since: datetime | None = None
    failed: str = ""

    @property
    def unknown_prompt_version(self) -> bool:
        return self.prompt_version is not None and self.prompt_version not in self.prompt_versions


def leaderboard(*, dataset: Dataset, prompt_version: str | None = None) -> Leaderboard:
    """The leaderboard of a dataset's scored responses, read from the kept aggregates in two
    queries whatever the dataset's size (a recomputation is requested when they are stale).

    Every judge's verdicts count, whichever prompt version made them, unless
    ``prompt_version`` names one; a response's score is first averaged over a judge's
    repeated votes. Responses on rejected or taken-down samples never count. Items with no
    answerability group (or no safety side) form the group ``UNGROUPED``, shown only when
    there are any: never counted as shifted in-context, out-of-context or unsafe on a guess.
    An image-question dataset shows the answerability groups its taxonomy has (a LogicVista
    one, none: its items are all "ungrouped").
    """
    task = leaderboard_task(dataset)
    if task == JudgeTask.MCBENCH_SAFETY:
        groups = ["unsafe", "safe"]
    else:
        known = taxonomy_view(dataset).groups
        groups = [group for group in ("shifted_ic", "ooc") if group in known]
    state = leaderboard_ensure(dataset_id=dataset.pk)
    versions = state.left_out
    known_versions = sorted(v for v in versions if v is not None)
    # With one version only, its figures are every version's (kept once).
    scope = None if known_versions == [prompt_version] else prompt_version
    sums = [
        CellSums(*row)
        for row in LeaderboardCell.objects.filter(dataset=dataset)
        .filter(Q(prompt_version__isnull=True) if scope is None else Q(prompt_version=scope))
        .order_by()
        .values_list(
            "model_name",
            "judge__name",
            "group",
            "dimension",
            "value",
            "n",
            "score_sum",
            "score_squares",
            "score_binary_n",
            "answer_n",
            "answer_sum",
            "reasoning_n",
            "reasoning_sum",
        )
    ]
    if any(row.group == UNGROUPED for row in sums):
        groups.append(UNGROUPED)
    return Leaderboard(
        task,
        groups,
        sorted({row.judge for row in sums if row.judge is not None}),
        leaderboard_from_sums(sums, groups),
        prompt_versions=known_versions,
        prompt_version=prompt_version,
        left_out_responses=versions.get(prompt_version, 0),
        computed_at=state.computed_at,
        computing=state.computing,
        pending_since=state.pending_since,
        failed=state.failed,
    )


def ratings_done_by(*, user_ids: list[int]) -> dict[int, int]:
    """How many audit ratings each of these users made (any audit), in one query."""
    rows = (
        AuditRating.objects.filter(auditor_id__in=user_ids)
        .order_by()
        .values_list("auditor_id")
        .annotate(n=Count("id"))
        .values_list("auditor_id", "n")
    )
    return dict(rows)


@dataclass
class ResponseJudging:
    """One evaluated model's response to a sample, every verdict on it, and the judges'
    consensus: the ensemble's score (a judge's repeats averaged first, then the judges, as the
    leaderboard does) and each judge's."""

    response: ModelResponse
    verdicts: list[Verdict]
    ensemble: Cell | None = None
    judges: dict[str, Cell] = field(default_factory=dict)


@dataclass
class SampleJudging:
    """What the judges said about one sample: its answerability votes (each judge's latest
    per repeat, as the consensus counts them) and their consensus with the sample's own label,
    and each model's response with its verdicts."""

    safety: bool
    responses: list[ResponseJudging]
    answerability: list[Verdict]
    sample_label: str
    consensus: Consensus | None

    @property
    def empty(self) -> bool:
        return not self.responses and not self.answerability


def sample_judging(*, sample: Sample) -> SampleJudging:
    """The judges' verdicts on a sample and on its responses, in two queries however many
    models, judges and repeats there are."""
    safety = sample.dataset.kind == DatasetKind.TRIMODAL
    responses = list(ModelResponse.objects.filter(sample=sample).order_by("model_name", "id"))
    verdicts = list(
        Verdict.objects.filter(sample=sample)
        .select_related("judge")
        .order_by("judge__name", "repeat", "-id")
    )
    by_response: dict[int, list[Verdict]] = {r.pk: [] for r in responses}
    answerability: list[Verdict] = []
    seen: set[tuple[int, int]] = set()
    for verdict in verdicts:
        if verdict.response_id is not None:
            by_response.setdefault(verdict.response_id, []).append(verdict)
        elif (
            verdict.task == JudgeTask.ANSWERABILITY
            and (verdict.judge_id, verdict.repeat) not in seen
        ):
            # The latest verdict per judge and repeat counts, as in the job's consensus.
            seen.add((verdict.judge_id, verdict.repeat))
            answerability.append(verdict)
    names = {r.pk: r.model_name for r in responses}
    rows = []
    for verdict in verdicts:
        if verdict.response_id is None or verdict.error_kind:
            continue
        found = verdict_score(
            safety=safety,
            answer=verdict.answer_score,
            reasoning=verdict.reasoning_score,
            label=verdict.label,
        )
        if found is not None:
            rows.append(
                ScoreRow(
                    names[verdict.response_id],
                    verdict.judge.name,
                    verdict.response_id,
                    UNGROUPED,
                    "",
                    "",
                    "",
                    found.score,
                    found.answer,
                    found.reasoning,
                )
            )
    boards = {row.model: row for row in build_leaderboard(rows, [])}
    judged = []
    for response in responses:
        board = boards.get(response.model_name)
        judged.append(
            ResponseJudging(
                response,
                by_response[response.pk],
                board.ensemble.overall if board else None,
                {name: judge.overall for name, judge in board.judges.items()} if board else {},
            )
        )
    label = sample_answerability(sample.answerability_group, sample.reference_answer).label
    votes = [Vote(v.judge.name, v.label or None, v.category or None) for v in answerability]
    judges = sorted({vote.judge for vote in votes})
    return SampleJudging(
        safety=safety,
        responses=judged,
        answerability=answerability,
        sample_label=label,
        consensus=consensus(label, votes, judges) if votes else None,
    )


def response_exists(*, dataset: Dataset, model: str | None) -> Exists:
    """Whether the outer sample (``OuterRef("pk")``) has a model's response (``model``'s, when
    given): the sample list's filter, an index-only probe of the unique index (sample,
    model_name). A response's dataset is its sample's, so the dataset is not tested: testing
    it read each response's row besides its index entry."""
    rows = ModelResponse.objects.filter(sample_id=OuterRef("pk"))
    return Exists(rows if model is None else rows.filter(model_name=model))


def verdict_label_exists(*, dataset: Dataset, label: str) -> Exists:
    """Whether a judge gave the outer sample a verdict of ``label``: the sample list's filter,
    on the index of migration 0009 (label, sample)."""
    return Exists(Verdict.objects.filter(sample_id=OuterRef("pk"), label=label))


def verdict_score_exists(*, dataset: Dataset, low: float | None, high: float | None) -> Exists:
    """Whether a judge scored a response to the outer sample within [low, high] (a verdict's
    score, the mean of its answer score and reasoning score): the sample list's filter.

    The answer score is 0 or 1 (a constraint of the table), so the range is written as a range
    of the reasoning score for each answer score: plain columns, on the index of migration
    0009 (answer_score, reasoning_score, sample).
    """
    low = 0.0 if low is None else low
    high = 1.0 if high is None else high
    within = Q()
    for answer in (0, 1):
        # (answer + reasoning) / 2 in [low, high]  <=>  reasoning in [2 low - a, 2 high - a]
        within |= Q(
            answer_score=answer,
            reasoning_score__gte=2 * low - answer,
            reasoning_score__lte=2 * high - answer,
        )
    return Exists(Verdict.objects.filter(within, sample_id=OuterRef("pk")))
