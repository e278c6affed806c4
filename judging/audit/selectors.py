"""Reads of the calibration audit: the sampling frame, audit sets, items to rate, progress."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING, Any

from django.db.models import (
    Avg,
    Case,
    Count,
    F,
    FloatField,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation import selectors as annotation_selectors
from annotation.models import Dataset, Sample
from annotation.selectors import dataset_list_visible
from core.roles import AUDITOR, is_auditor
from judging.audit import rubric
from judging.consensus import ANSWERABLE, UNANSWERABLE
from judging.extraction import is_refusal
from judging.models import (
    AuditItem,
    AuditLease,
    AuditRating,
    AuditSet,
    AuditTask,
    JudgeTask,
    ModelResponse,
    Verdict,
)
from judging.stats.sampling import FrameItem, stratum_key

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

    from judging.audit.report import Gathered

    AnyUser = User | AnonymousUser

VERDICT_TASK: dict[str, str] = {
    AuditTask.SCORING: JudgeTask.MMOOC_SCORING,
    AuditTask.ANSWERABILITY: JudgeTask.ANSWERABILITY,
    AuditTask.SAFETY: JudgeTask.MCBENCH_SAFETY,
}
# Frame rows stream from the database in chunks of this size.
CHUNK = 5000
MISSING = "-"


def item_stratum(*, task: str, category: str, fmt: str, model: str | None) -> str:
    """The stratum of an audit item: category|format|evaluated model (no model for samples)."""
    if task == AuditTask.ANSWERABILITY:
        return stratum_key(category or MISSING, fmt or MISSING)
    return stratum_key(category or MISSING, fmt or MISSING, model or MISSING)


def item_category(*, category_code: str, safety_category: str) -> str:
    return category_code or safety_category


def item_format(*, question_format: str, safety_label: str) -> str:
    """MCBench has no question format; its scenario side (safe or unsafe) stands in."""
    return question_format or safety_label


@dataclass(frozen=True)
class FrameRow:
    """One judged item of the frame, with the rows it stands for."""

    item: FrameItem
    sample_id: int
    response_id: int | None


def _first_votes(
    rows: Iterable[tuple[int, int, int, object]],
) -> dict[int, dict[int, object]]:
    """item → judge → the value of the judge's lowest-repeat verdict.

    Repeated votes serve the calibration figures only; every other figure takes a judge's
    first vote, so that adding repeats never changes them.
    """
    best: dict[int, dict[int, tuple[int, object]]] = {}
    for item_id, judge_id, repeat, value in rows:
        per = best.setdefault(item_id, {})
        held = per.get(judge_id)
        if held is None or repeat < held[0]:
            per[judge_id] = (repeat, value)
    return {item: {judge: v for judge, (_r, v) in per.items()} for item, per in best.items()}


def _majority_is(values: Iterable[object], positive: str) -> bool:
    """True when the positive label has at least as many votes as the rest (ties: positive)."""
    listed = list(values)
    hits = sum(1 for value in listed if value == positive)
    return hits > 0 and 2 * hits >= len(listed)


def _response_frame(dataset: Dataset, task: str) -> Iterator[FrameRow]:
    verdicts = Verdict.objects.filter(
        task=VERDICT_TASK[task], response__dataset=dataset, error_kind=""
    ).order_by()
    raw: Iterator[tuple[int, int, int, object]]
    if task == AuditTask.SCORING:
        # A harness's metric gives an answer score alone (its reasoning score is empty).
        scored = verdicts.filter(answer_score__isnull=False)
        raw = (
            (r, j, rep, (a, s))
            for r, j, rep, a, s in scored.values_list(
                "response_id", "judge_id", "repeat", "answer_score", "reasoning_score"
            ).iterator(chunk_size=CHUNK)
        )
    else:
        labelled = verdicts.filter(label__in=["safe", "unsafe"])
        raw = (
            (r, j, rep, label)
            for r, j, rep, label in labelled.values_list(
                "response_id", "judge_id", "repeat", "label"
            ).iterator(chunk_size=CHUNK)
        )
    votes = _first_votes(raw)
    fields = [
        "id",
        "sample_id",
        "model_name",
        "sample__category_code",
        "sample__safety_category",
        "sample__question_format",
        "sample__safety_label",
    ]
    if task == AuditTask.SCORING:
        fields.append("response")
    responses = ModelResponse.objects.filter(dataset=dataset).order_by().values_list(*fields)
    for row in responses.iterator(chunk_size=CHUNK):
        response_id, sample_id, model, category, safety_category, fmt, safety_label = row[:7]
        per = votes.get(response_id)
        if not per:
            continue
        if task == AuditTask.SCORING:
            answers = {vote[0] for vote in per.values()}  # type: ignore[index]
            reasons = [
                float(vote[1])  # type: ignore[index]
                for vote in per.values()
                if vote[1] is not None  # type: ignore[index]
            ]
            disagree = len(answers) > 1 or bool(reasons and max(reasons) - min(reasons) >= 0.5)
            # The judges' scores carry no refusal label: refusals are found by the rule
            # extractor's patterns, the same ones the judges' rule pass uses.
            rare = is_refusal(row[7])
        else:
            disagree = len(set(per.values())) > 1
            rare = _majority_is(per.values(), "unsafe")
        stratum = item_stratum(
            task=task,
            category=item_category(category_code=category, safety_category=safety_category),
            fmt=item_format(question_format=fmt, safety_label=safety_label),
            model=model,
        )
        yield FrameRow(
            FrameItem(f"r{response_id}", stratum, rare, disagree), sample_id, response_id
        )


def _sample_frame(dataset: Dataset) -> Iterator[FrameRow]:
    verdicts = (
        Verdict.objects.filter(
            task=JudgeTask.ANSWERABILITY,
            sample__dataset=dataset,
            response__isnull=True,
            error_kind="",
            label__in=["answerable", "unanswerable"],
        )
        .order_by()
        .values_list("sample_id", "judge_id", "repeat", "label")
    )
    votes = _first_votes(verdicts.iterator(chunk_size=CHUNK))
    samples = annotation_selectors.sample_label_rows(
        dataset=dataset, fields=("category_code", "question_format"), chunk_size=CHUNK
    )
    for sample_id, category, fmt in samples:
        per = votes.get(sample_id)
        if not per:
            continue
        stratum = item_stratum(task=AuditTask.ANSWERABILITY, category=category, fmt=fmt, model=None)
        yield FrameRow(
            FrameItem(
                f"s{sample_id}",
                stratum,
                rare=_majority_is(per.values(), "unanswerable"),
                disagree=len(set(per.values())) > 1,
            ),
            sample_id,
            None,
        )


def audit_frame(*, dataset: Dataset, task: str) -> list[FrameRow]:
    """The sampling frame: every judged item of the task, with its stratum and flags.

    Two streamed queries: the verdicts, then the items. Rare: the judges' majority says
    unsafe (safety) or unanswerable (answerability), or the response refuses (scoring).
    Disagree: the judges' first votes differ (scores: different answer scores, or reasoning
    scores half a point or more apart).
    """
    if task == AuditTask.ANSWERABILITY:
        return list(_sample_frame(dataset))
    return list(_response_frame(dataset, task))


def frame_strata_sizes(rows: Iterable[FrameRow]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for row in rows:
        sizes[row.item.stratum] = sizes.get(row.item.stratum, 0) + 1
    return sizes


def audit_set_list(*, dataset: Dataset) -> QuerySet[AuditSet]:
    """A dataset's audit sets, newest first, with their counts (one query for any page)."""
    return (
        AuditSet.objects.filter(dataset=dataset)
        .select_related("created_by")
        .annotate(
            n_items=Count("items", distinct=True),
            n_ratings=Count("ratings", distinct=True),
        )
        .order_by("-created_at", "-id")
    )


def audit_set_get_visible(*, user: AnyUser, audit_set_id: int) -> AuditSet | None:
    """The audit set, when the user is a lead or an auditor in its dataset."""
    if not is_auditor(user):
        return None
    return (
        AuditSet.objects.select_related("dataset")
        .filter(pk=audit_set_id, dataset__in=dataset_list_visible(user=user, role=AUDITOR))
        .first()
    )


@dataclass(frozen=True)
class RatingItem:
    """What the rating form shows: the item, its sample with media, the response, the lease."""

    item: AuditItem
    sample: Sample
    response: ModelResponse | None
    lease: AuditLease | None
    rating: AuditRating | None


def audit_item_for_rating(*, user: User, item_id: int) -> RatingItem | None:
    """An item of a visible audit set with everything the form shows (never a verdict)."""
    if not is_auditor(user):
        return None
    item = (
        AuditItem.objects.select_related("audit_set__dataset", "sample", "response")
        .prefetch_related(annotation_selectors.sample_media_prefetch("sample__media_links"))
        .filter(pk=item_id, audit_set__dataset__in=dataset_list_visible(user=user, role=AUDITOR))
        .first()
    )
    if item is None:
        return None
    lease = AuditLease.objects.filter(item=item, auditor=user, done=False).first()
    rating = AuditRating.objects.filter(item=item, auditor=user).first()
    return RatingItem(item, item.sample, item.response, lease, rating)


@dataclass(frozen=True)
class AuditorProgress:
    username: str
    ratings: int
    median_seconds: float | None


@dataclass(frozen=True)
class AuditProgress:
    """Slots filled and open, ratings per auditor, and what this auditor holds."""

    items: int
    slots: int
    done: int
    leased: int
    double_rated_items: int
    last_rating_at: object
    auditors: list[AuditorProgress]

    @property
    def percent(self) -> float:
        return round(100 * self.done / self.slots, 1) if self.slots else 0.0


def audit_progress(*, audit_set: AuditSet) -> AuditProgress:
    """Progress of an audit set in three queries."""
    now = timezone.now()
    slots = AuditLease.objects.filter(audit_set=audit_set).aggregate(
        n_total=Count("id"),
        n_done=Count("id", filter=Q(done=True)),
        n_leased=Count("id", filter=Q(done=False, lease_expires_at__gte=now)),
        n_items=Count("item", distinct=True),
        n_double=Count("id", filter=Q(slot=1)),
    )
    seconds: dict[str, list[float]] = {}
    last = None
    for username, spent, created in (
        AuditRating.objects.filter(audit_set=audit_set)
        .order_by()
        .values_list("auditor__username", "seconds_spent", "created_at")
    ):
        seconds.setdefault(username, []).append(spent)
        last = created if last is None or created > last else last
    return AuditProgress(
        items=slots["n_items"] or 0,
        slots=slots["n_total"] or 0,
        done=slots["n_done"] or 0,
        leased=slots["n_leased"] or 0,
        double_rated_items=slots["n_double"] or 0,
        last_rating_at=last,
        auditors=[
            AuditorProgress(name, len(values), round(median(values), 1) if values else None)
            for name, values in sorted(seconds.items())
        ],
    )


def audit_gather(audit_set: AuditSet) -> Gathered:
    """Three queries: the items with their attributes, the ratings, the items' verdicts."""
    # judging.audit.report loads numpy and scipy: only when an audit's figures are computed.
    from judging.audit.report import Gathered

    task = audit_set.task
    rows = list(
        AuditItem.objects.filter(audit_set=audit_set)
        .order_by("position")
        .values_list(
            "id",
            "response_id",
            "sample_id",
            "design_stratum",
            "weight",
            "sample__category_code",
            "sample__safety_category",
            "sample__question_format",
            "sample__safety_label",
            "sample__scenario",
            "sample__safety_subcategory",
            "response__model_name",
        )
    )
    index_of_item = {row[0]: i for i, row in enumerate(rows)}
    by_response = {row[1]: i for i, row in enumerate(rows) if row[1] is not None}
    by_sample = {row[2]: i for i, row in enumerate(rows)}
    n = len(rows)
    human: list[dict[str, str | None] | None] = [None] * n
    second: list[dict[str, str | None] | None] = [None] * n
    for rating in (
        AuditRating.objects.filter(audit_set=audit_set)
        .order_by("item_id", "created_at", "id")
        .values_list("item_id", "answer_score", "reasoning_score", "refused", "safety_label")
    ):
        i = index_of_item[rating[0]]
        labels = rubric.human_labels(
            task,
            answer_score=rating[1],
            reasoning_score=rating[2],
            refused=rating[3],
            safety_label=rating[4],
        )
        if human[i] is None:
            human[i] = labels
        elif second[i] is None:
            second[i] = labels
    verdicts = Verdict.objects.filter(task=VERDICT_TASK[task], error_kind="").order_by()
    audit_items = AuditItem.objects.filter(audit_set=audit_set)
    if task == AuditTask.ANSWERABILITY:
        # An abstention is no vote: it counts neither as a label nor as agreement.
        verdicts = verdicts.filter(
            response__isnull=True,
            sample_id__in=audit_items.values("sample_id"),
            label__in=[ANSWERABLE, UNANSWERABLE],
        )
        key_field, lookup = "sample_id", by_sample
    else:
        verdicts = verdicts.filter(response_id__in=audit_items.values("response_id"))
        key_field, lookup = "response_id", by_response
    first: dict[str, list[tuple[int, dict[str, str | None]] | None]] = {}
    every: dict[str, list[list[dict[str, str | None]]]] = {}
    family: dict[str, str] = {}
    for key, judge, judge_family, repeat, answer, reasoning, label in verdicts.values_list(
        key_field,
        "judge__name",
        "judge__family",
        "repeat",
        "answer_score",
        "reasoning_score",
        "label",
    ):
        i = lookup[key]
        labels = rubric.judge_labels(task, answer, reasoning, label)
        if judge not in first:
            first[judge] = [None] * n
            every[judge] = [[] for _ in range(n)]
            family[judge] = judge_family
        held = first[judge][i]
        if held is None or repeat < held[0]:
            first[judge][i] = (repeat, labels)
        every[judge][i].append(labels)
    categories: list[str] = []
    formats: list[str] = []
    scenarios: list[str | None] = []
    models: list[str | None] = []
    for row in rows:
        (_id, _r, _s, _d, _w, category, safety_category, fmt, safety_label, scenario) = row[:10]
        categories.append(item_category(category_code=category, safety_category=safety_category))
        formats.append(item_format(question_format=fmt, safety_label=safety_label))
        scenarios.append(scenario or row[10] or None)
        models.append(row[11])
    return Gathered(
        task=task,
        item_ids=[row[0] for row in rows],
        design=[row[3] for row in rows],
        weights=[row[4] for row in rows],
        groups={
            "category": [c or None for c in categories],
            "format": [f or None for f in formats],
            "scenario": scenarios,
            "model": models,
        },
        models=models,
        human=human,
        second=second,
        first_vote={
            judge: [None if v is None else v[1] for v in values]
            for judge, values in sorted(first.items())
        },
        all_votes={judge: every[judge] for judge in sorted(every)},
        family=family,
    )


def audit_population_scores(audit_set: AuditSet) -> list[tuple[int, str, str, float]]:
    """(response id, model, stratum, judges' mean first-vote score) of every judged response."""
    task = audit_set.task
    verdicts = Verdict.objects.filter(
        task=VERDICT_TASK[task], response__dataset_id=audit_set.dataset_id, error_kind="", repeat=0
    ).order_by()
    if task == AuditTask.SCORING:
        verdicts = verdicts.filter(answer_score__isnull=False)
        # MMOOC's overall score, or the answer score of a verdict that has no reasoning score
        # (a harness's metric).
        score: Any = Coalesce(
            (F("answer_score") + F("reasoning_score")) / Value(2.0),
            F("answer_score") * Value(1.0),
            output_field=FloatField(),
        )
    else:
        verdicts = verdicts.filter(label__in=["safe", "unsafe"])
        score = Case(
            When(label="safe", then=Value(1.0)), default=Value(0.0), output_field=FloatField()
        )
    rows = verdicts.values(
        "response_id",
        "response__model_name",
        "sample__category_code",
        "sample__safety_category",
        "sample__question_format",
        "sample__safety_label",
    ).annotate(score=Avg(score, output_field=FloatField()))
    out = []
    for row in rows:
        stratum = item_stratum(
            task=task,
            category=item_category(
                category_code=row["sample__category_code"],
                safety_category=row["sample__safety_category"],
            ),
            fmt=item_format(
                question_format=row["sample__question_format"],
                safety_label=row["sample__safety_label"],
            ),
            model=row["response__model_name"],
        )
        out.append((row["response_id"], row["response__model_name"], stratum, float(row["score"])))
    return sorted(out)


def audit_item_responses(*, audit_set: AuditSet) -> dict[int, int | None]:
    """The evaluated response of each audit item, by item id."""
    return dict(AuditItem.objects.filter(audit_set=audit_set).values_list("id", "response_id"))
