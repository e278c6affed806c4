"""Reads of the review app: settings, leases, the workbench, adjudication and progress."""

from __future__ import annotations

import datetime as dt
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone
from django_stubs_ext import WithAnnotations

from annotation import selectors as annotation_selectors
from annotation.models import Dataset, NoteKey, Sample, SampleStatus, TaxonomyTerm, TermKind
from core import charts
from core.roles import ANNOTATOR, is_lead
from review import editing
from review.models import (
    Assignment,
    Comment,
    Decision,
    Draft,
    GoldAnswer,
    GoldItem,
    Outcome,
    RejectReason,
    Review,
    ReviewSettings,
    Skip,
    Slot,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

    AnyUser = User | AnonymousUser


# A reviewer may reopen and amend their review while its sample waits for the other reviews.
AMENDABLE_STATUSES = frozenset({SampleStatus.PENDING_REVIEW, SampleStatus.IN_REVIEW})


def review_settings_get(*, dataset: Dataset) -> ReviewSettings:
    """The dataset's settings, or unsaved defaults when the lead never set any."""
    found = ReviewSettings.objects.filter(dataset=dataset).first()
    return found or ReviewSettings(dataset=dataset)


def sees_others_work(*, user: Any, settings: ReviewSettings) -> bool:
    """Whether the user may see other reviewers' reviews and comments on the dataset's
    samples: in blind review only leads may; otherwise everyone who sees the sample."""
    return not settings.blind or is_lead(user)


def sees_every_reviewer(user: Any) -> bool:
    """Whether the user may see other reviewers' figures (counts, times, agreement) on a
    dataset's progress and quality pages: leads only; anyone else sees their own row."""
    return is_lead(user)


def sees_others_work_on(*, user: Any, sample: Sample) -> bool:
    """``sees_others_work`` for the dataset of a sample (one query, for non-leads only)."""
    return is_lead(user) or sees_others_work(
        user=user, settings=review_settings_get(dataset=sample.dataset)
    )


def sees_others_work_in(*, user: Any, dataset: Dataset) -> bool:
    """``sees_others_work`` for a dataset (one query, for non-leads only): whether the sample
    list lets the user filter on other reviewers' work there."""
    return is_lead(user) or sees_others_work(
        user=user, settings=review_settings_get(dataset=dataset)
    )


def review_decision_exists(*, dataset: Dataset, decision: str, username: str | None) -> Exists:
    """Whether a review of the outer sample (``OuterRef("pk")``), by ``username`` when given,
    made ``decision``: "accept" (nothing changed), "correct" (an accept with edits), "reject",
    or "skip" (the reviewer set it aside). The sample list's filter, on the index of
    migration 0007 (dataset, decision, sample)."""
    rows: QuerySet[Any]
    if decision == "skip":
        rows = Skip.objects.filter(dataset=dataset, sample_id=OuterRef("pk"))
    else:
        rows = Review.objects.filter(dataset=dataset, sample_id=OuterRef("pk"))
        if decision == "accept":
            rows = rows.filter(decision=Decision.ACCEPT, values={})
        elif decision == "correct":
            rows = rows.filter(decision=Decision.ACCEPT).exclude(values={})
        else:
            rows = rows.filter(decision=Decision.REJECT)
    if username:
        rows = rows.filter(reviewer__username=username)
    return Exists(rows)


def sample_reviews_visible(*, user: Any, sample: Sample) -> list[Review]:
    """Every review of a sample, round by round, that the user may see (in blind review a
    reviewer sees only their own), in two queries however many there are."""
    reviews = Review.objects.filter(sample=sample).select_related("reviewer")
    if not sees_others_work_on(user=user, sample=sample):
        reviews = reviews.filter(reviewer_id=user.pk)
    return list(reviews.order_by("round", "created_at", "id"))


def sample_assignments(*, sample: Sample) -> list[Assignment]:
    """The people the sample is assigned to, with who assigned it, in order; one query."""
    return list(
        Assignment.objects.filter(sample=sample)
        .select_related("reviewer", "assigned_by")
        .order_by("reviewer__username")
    )


def review_get_own(*, reviewer: User, review_id: int) -> Review | None:
    """One of the reviewer's own reviews, on a dataset they still review in."""
    datasets = annotation_selectors.dataset_list_visible(user=reviewer, role=ANNOTATOR)
    return Review.objects.filter(pk=review_id, reviewer=reviewer, dataset__in=datasets).first()


def lease_get(*, reviewer: User, sample: Sample) -> Slot | None:
    """The reviewer's unfinished slot of this sample (its lease may have expired)."""
    return Slot.objects.filter(sample=sample, reviewer=reviewer, done=False).first()


@dataclass(frozen=True)
class QueueOverview:
    settings: ReviewSettings
    open_slots: int
    leased_slots: int
    samples_in_queue: int
    my_reviews: int
    my_lease: Slot | None
    my_skips: list[Skip]


def queue_overview(
    *, dataset: Dataset, reviewer: User, now: dt.datetime | None = None
) -> QueueOverview:
    """What the queue page shows a reviewer, in a fixed number of queries."""
    now = now or timezone.now()
    counts = Slot.objects.filter(dataset=dataset, done=False, gold=False).aggregate(
        open=Count("id", filter=Q(lease_expires_at__lt=now)),
        leased=Count("id", filter=Q(lease_expires_at__gte=now)),
        samples=Count("sample", distinct=True),
    )
    lease = (
        Slot.objects.filter(dataset=dataset, reviewer=reviewer, done=False)
        .select_related("sample")
        .first()
    )
    skips = list(
        Skip.objects.filter(dataset=dataset, reviewer=reviewer, gold=False)
        .select_related("sample")
        .order_by("created_at", "id")[:200]
    )
    return QueueOverview(
        settings=review_settings_get(dataset=dataset),
        open_slots=counts["open"],
        leased_slots=counts["leased"],
        samples_in_queue=counts["samples"],
        my_reviews=Review.objects.filter(dataset=dataset, reviewer=reviewer).count(),
        my_lease=lease,
        my_skips=skips,
    )


@dataclass(frozen=True)
class TermChoice:
    code: str
    name: str
    parent_code: str


def _choices(terms: list[TaxonomyTerm], kind: str, value: str) -> list[TermChoice]:
    """The terms offered for a field: a retired term only to the sample that holds it."""
    return [
        TermChoice(t.code, t.display_name, t.parent_code)
        for t in terms
        if t.kind == kind and (not t.retired or t.code == value)
    ]


# The reviewable fields whose values are taxonomy terms, and the kind of term each takes.
TERM_FIELDS: dict[str, str] = {
    "answerability_group": TermKind.GROUP,
    "category_code": TermKind.CATEGORY,
    "scenario": TermKind.SCENARIO,
    "safety_category": TermKind.SAFETY_CATEGORY,
    "safety_subcategory": TermKind.SAFETY_SUBCATEGORY,
}


@dataclass(frozen=True)
class TermField:
    """A term-valued field as a form offers it: a choice among the dataset's terms, or free
    text with the values already in use as suggestions when the taxonomy has none."""

    name: str
    value: str
    terms: list[TermChoice]
    suggestions: list[str]

    @property
    def off_taxonomy(self) -> bool:
        """The value is not one of the terms: it is shown as it is, and kept."""
        return bool(self.value and self.terms) and self.value not in {t.code for t in self.terms}


def term_fields(
    *, dataset: Dataset, fields: tuple[str, ...], values: dict[str, Any], terms: list[TaxonomyTerm]
) -> dict[str, TermField]:
    """The term fields of a review form; one query per field that has no terms."""
    names = [name for name in fields if name in TERM_FIELDS]
    choices = {
        name: _choices(terms, TERM_FIELDS[name], str(values.get(name) or "")) for name in names
    }
    free = [name for name in names if not choices[name]]
    suggestions = annotation_selectors.sample_values_in_use(dataset=dataset, fields=free)
    return {
        name: TermField(
            name=name,
            value=str(values.get(name) or ""),
            terms=choices[name],
            suggestions=suggestions.get(name, []),
        )
        for name in names
    }


@dataclass
class Workbench:
    """Everything the review form of one sample shows."""

    sample: Sample
    settings: ReviewSettings
    fields: tuple[str, ...]
    lease: Slot | None
    draft: dict[str, Any] | None
    comments: list[Comment]
    other_reviews: list[Review]
    judge_votes: list[dict[str, Any]]
    # Whether this reader sees judge hints (votes, the disagreement flag) at all.
    show_judge_hints: bool = False
    term_fields: dict[str, TermField] = field(default_factory=dict)
    # The values the form starts from: the sample's, with the reviewer's own edits over them
    # when they reopen their review.
    form_values: dict[str, Any] = field(default_factory=dict)
    my_review: Review | None = None
    # The user's review of the current round, also once its sample is settled (their answer,
    # when the sample was served to them as a gold item).
    submitted: Review | GoldAnswer | None = None
    images: list[Any] = field(default_factory=list)
    audio: list[Any] = field(default_factory=list)
    pair_images: list[Any] = field(default_factory=list)


def draft_get(*, reviewer: User, sample: Sample) -> dict[str, Any] | None:
    payload: dict[str, Any] | None = (
        Draft.objects.filter(sample=sample, reviewer=reviewer)
        .values_list("payload", flat=True)
        .first()
    )
    return payload


def comments_visible(*, user: User, sample: Sample) -> QuerySet[Comment]:
    """Comments on a sample; in blind review a reviewer sees only their own (leads see all)."""
    comments = Comment.objects.filter(sample=sample).select_related("author")
    settings = review_settings_get(dataset=sample.dataset)
    if not sees_others_work(user=user, settings=settings):
        comments = comments.filter(author=user)
    return comments


def judge_votes(sample: Sample) -> list[dict[str, Any]]:
    votes = annotation_selectors.sample_note(sample_id=sample.pk, key=NoteKey.JUDGE_VOTES) or []
    return [v for v in votes if isinstance(v, dict)]


def workbench_get(*, user: User, sample_id: int, role: str | None = None) -> Workbench | None:
    """The sample as its reviewer sees it (None unless the user may see it, and work on it in
    ``role`` when given): blind review hides others' verdicts and the judges' votes;
    otherwise judge votes show only when the lead turned hints on."""
    sample = annotation_selectors.sample_get_visible(user=user, sample_id=sample_id, role=role)
    if sample is None:
        return None
    settings = review_settings_get(dataset=sample.dataset)
    lead = is_lead(user)
    others_visible = sees_others_work(user=user, settings=settings)
    comments = Comment.objects.filter(sample=sample).select_related("author")
    if not others_visible:
        comments = comments.filter(author=user)
    latest = Slot.objects.filter(sample=sample).order_by("-round").values("round")[:1]
    current_round = list(
        Review.objects.filter(sample=sample, round=Subquery(latest)).select_related("reviewer")
    )
    others: list[Review] = []
    if others_visible:
        others = [r for r in current_round if r.reviewer_id != user.pk]
    own = next((r for r in current_round if r.reviewer_id == user.pk), None)
    submitted: Review | GoldAnswer | None = own
    my_review = own if sample.status in AMENDABLE_STATUSES else None
    gold = _gold_slot(user=user, sample=sample)
    if gold is not None:
        # Served as a gold item: shown as any sample in review, without its settled reviews.
        sample.status = SampleStatus.IN_REVIEW
        others, my_review = [], None
        submitted = getattr(gold, "gold_answer", None)
    hints = lead or (settings.show_judge_hints and not settings.blind)
    fields = editing.reviewable_fields(sample.dataset.kind)
    form_values = {name: getattr(sample, name) for name in fields}
    if my_review is not None and my_review.decision == Decision.ACCEPT:
        form_values |= {k: v for k, v in my_review.values.items() if k in form_values}
    terms = list(annotation_selectors.taxonomy_terms(dataset=sample.dataset))
    links = list(sample.media_links.all())
    pair_images: list[Any] = []
    if sample.pair_id:
        pair = annotation_selectors.sample_get_visible(user=user, sample_id=sample.pair_id)
        if pair is not None:
            sample.pair = pair
            pair_images = [link for link in pair.media_links.all() if link.role == "image"]
    return Workbench(
        sample=sample,
        settings=settings,
        fields=fields,
        lease=lease_get(reviewer=user, sample=sample),
        draft=draft_get(reviewer=user, sample=sample),
        comments=list(comments),
        other_reviews=others,
        judge_votes=judge_votes(sample) if hints else [],
        show_judge_hints=hints,
        term_fields=term_fields(
            dataset=sample.dataset, fields=fields, values=form_values, terms=terms
        ),
        form_values=form_values,
        my_review=my_review,
        submitted=submitted,
        images=[link for link in links if link.role == "image"],
        audio=[link for link in links if link.role == "audio"],
        pair_images=pair_images,
    )


def _gold_slot(*, user: User, sample: Sample) -> Slot | None:
    return (
        Slot.objects.filter(sample=sample, reviewer=user, gold=True)
        .select_related("gold_answer")
        .first()
    )


@dataclass(frozen=True)
class GoldFeedback:
    matched: bool
    matches: dict[str, bool]
    expected: dict[str, Any]
    explanation: str


def gold_feedback_get(*, submitted: Any) -> GoldFeedback | None:
    """What a reviewer is shown after answering a gold item, when its dataset turned gold
    feedback on; None for a review, or with feedback off (two queries, gold answers only)."""
    if not isinstance(submitted, GoldAnswer):
        return None
    if not ReviewSettings.objects.filter(
        dataset_id=submitted.dataset_id, gold_feedback=True
    ).exists():
        return None
    item = GoldItem.objects.filter(pk=submitted.gold_item_id).first()
    if item is None:
        return None
    return GoldFeedback(
        matched=submitted.matched,
        matches=dict(submitted.matches),
        expected=dict(item.expected),
        explanation=item.explanation,
    )


def gold_item_get(*, sample: Sample) -> GoldItem | None:
    return GoldItem.objects.filter(sample=sample).first()


def gold_items(*, dataset: Dataset) -> QuerySet[GoldItem]:
    """A dataset's gold items, in sample order."""
    return GoldItem.objects.filter(dataset=dataset).order_by("sample_id")


# A gold answer agreed with its item when every key of the expected answer matched (checked by
# ``review.gold.services.answer_matches`` and stored as ``matched`` when it was given): the one
# rule behind each reviewer's gold accuracy and each gold item's.
GOLD_AGREED = Q(matched=True)


def gold_is_item(*, dataset: Dataset) -> Exists:
    """Whether the outer sample (``OuterRef("pk")``) is a gold item: an index lookup on the
    item's unique sample (annotation's gold column and filter)."""
    return Exists(GoldItem.objects.filter(sample_id=OuterRef("pk")))


def _count_of(rows: QuerySet[Any], key: str) -> Coalesce:
    return Coalesce(
        Subquery(rows.order_by().values(key).annotate(n=Count("pk")).values("n")[:1]),
        0,
        output_field=IntegerField(),
    )


class GoldItemCounts(TypedDict):
    served: int
    answered: int
    agreed: int


def gold_items_with_accuracy(
    *, dataset: Dataset
) -> QuerySet[WithAnnotations[GoldItem, GoldItemCounts]]:
    """A dataset's gold items in sample order, each with its sample and ``served`` (the
    reviewers served it as gold: answered, skipped, released or still holding it),
    ``answered`` and ``agreed`` (answers that agreed with it); one query for a page."""
    served = Slot.objects.filter(sample_id=OuterRef("sample_id"), gold=True)
    answers = GoldAnswer.objects.filter(gold_item_id=OuterRef("pk"))
    return (
        GoldItem.objects.filter(dataset=dataset)
        .select_related("sample")
        .annotate(
            served=_count_of(served, "sample_id"),
            answered=_count_of(answers, "gold_item_id"),
            agreed=_count_of(answers.filter(GOLD_AGREED), "gold_item_id"),
        )
        .order_by("sample_id")
    )


def reviewer_gold_counts(*, dataset: Dataset) -> dict[int, tuple[int, int]]:
    """Per reviewer (user id), their gold answers on the dataset that matched, and in all."""
    rows = (
        GoldAnswer.objects.filter(dataset=dataset)
        .values_list("reviewer_id")
        .annotate(correct=Count("id", filter=GOLD_AGREED), total=Count("id"))
        .values_list("reviewer_id", "correct", "total")
        .order_by()
    )
    return {reviewer: (correct, total) for reviewer, correct, total in rows}


def adjudication_done(*, sample: Sample) -> Outcome | None:
    """The lead's adjudication of a sample that no longer waits for one (None while it waits,
    or when it was never adjudicated)."""
    if sample.status == SampleStatus.NEEDS_ADJUDICATION:
        return None
    return (
        Outcome.objects.filter(sample=sample, adjudicated=True)
        .select_related("adjudicated_by")
        .first()
    )


def adjudication_queue(*, dataset: Dataset) -> QuerySet[Sample]:
    """Samples whose reviewers disagreed, oldest first, media prefetched."""
    return annotation_selectors.sample_list(dataset=dataset, status=SampleStatus.NEEDS_ADJUDICATION)


def reviews_by_sample(*, sample_ids: list[int]) -> dict[int, list[Review]]:
    """The reviews of a page of samples in one query (each sample's latest round)."""
    grouped: dict[int, list[Review]] = defaultdict(list)
    for review in (
        Review.objects.filter(sample_id__in=sample_ids)
        .select_related("reviewer")
        .order_by("sample_id", "-round", "created_at", "id")
    ):
        kept = grouped[review.sample_id]
        if not kept or kept[0].round == review.round:
            kept.append(review)
    return grouped


@dataclass(frozen=True)
class ReviewerStats:
    username: str
    reviews: int
    median_seconds: float | None
    per_hour: float | None


@dataclass(frozen=True)
class Progress:
    status_bars: list[charts.Bar]
    total_samples: int
    daily_bars: list[charts.Bar]
    reviewers: list[ReviewerStats]
    settled: int
    agreed: int
    adjudicated: int
    agreement_rate: float | None
    reject_bars: list[charts.Bar]
    total_reviews: int
    median_seconds: float | None


def progress_get(*, dataset: Dataset, user: Any, days: int = 14) -> Progress:
    """Counts by status, throughput and time per reviewer (the user's own row only, unless
    they see every reviewer), agreement and rejection reasons.

    A fixed number of queries; per-reviewer medians are computed from one scan of the
    dataset's (reviewer, seconds, time) triples.
    """
    counts = annotation_selectors.dataset_status_counts(dataset=dataset)
    per_reviewer: dict[str, list[float]] = defaultdict(list)
    spans: dict[str, tuple[dt.datetime, dt.datetime]] = {}
    all_seconds: list[float] = []
    for username, seconds, created in Review.objects.filter(dataset=dataset).values_list(
        "reviewer__username", "seconds_spent", "created_at"
    ):
        per_reviewer[username].append(seconds)
        all_seconds.append(seconds)
        first, last = spans.get(username, (created, created))
        spans[username] = (min(first, created), max(last, created))
    reviewers = []
    everyone = sees_every_reviewer(user)
    for username, seconds_list in sorted(per_reviewer.items()):
        if not everyone and username != user.get_username():
            continue
        first, last = spans[username]
        hours = (last - first).total_seconds() / 3600
        reviewers.append(
            ReviewerStats(
                username=username,
                reviews=len(seconds_list),
                median_seconds=_median(seconds_list),
                per_hour=round(len(seconds_list) / hours, 1) if hours > 0 else None,
            )
        )
    since = timezone.now() - dt.timedelta(days=days)
    daily = (
        Review.objects.filter(dataset=dataset, created_at__gte=since)
        .annotate(day=TruncDate("created_at"))
        .values_list("day")
        .annotate(n=Count("id"))
        .values_list("day", "n")
        .order_by("day")
    )
    outcomes = Outcome.objects.filter(dataset=dataset).aggregate(
        settled=Count("id"),
        agreed=Count("id", filter=Q(agreement=True)),
        adjudicated=Count("id", filter=Q(adjudicated=True)),
    )
    reasons = Counter(
        dict(
            Review.objects.filter(dataset=dataset)
            .exclude(reject_reason="")
            .values_list("reject_reason")
            .annotate(n=Count("id"))
            .values_list("reject_reason", "n")
        )
    )
    reason_labels = dict(RejectReason.choices)
    settled = outcomes["settled"]
    return Progress(
        status_bars=charts.bars([(str(c.label), c.count) for c in counts]),
        total_samples=sum(c.count for c in counts),
        daily_bars=charts.bars([(day.isoformat(), n) for day, n in daily]),
        reviewers=reviewers,
        settled=settled,
        agreed=outcomes["agreed"],
        adjudicated=outcomes["adjudicated"],
        agreement_rate=round(outcomes["agreed"] / settled, 3) if settled else None,
        reject_bars=charts.bars(
            [(str(reason_labels.get(r, r)), n) for r, n in reasons.most_common()]
        ),
        total_reviews=len(all_seconds),
        median_seconds=_median(all_seconds),
    )


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def reviews_done_by(*, user_ids: list[int]) -> dict[int, int]:
    """How many reviews each of these users submitted (any dataset), in one query."""
    rows = (
        Review.objects.filter(reviewer_id__in=user_ids)
        .order_by()
        .values_list("reviewer_id")
        .annotate(n=Count("id"))
        .values_list("reviewer_id", "n")
    )
    return dict(rows)
