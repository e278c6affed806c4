"""Reads of the Reviewers page: each reviewer's quality figures on a dataset, per field.

Every reviewer's figures are computed in six queries whatever the number of reviewers and
samples, by the pure ``review.quality.reviewers`` (numpy, loaded only when a report is made),
in a worker that stores them (``review.quality.computations``). A lead sees every reviewer;
anyone else only their own row, with their co-reviewers unnamed (filtered when read).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext as _

from annotation import selectors as annotation_selectors
from annotation.models import ChangeSource, Dataset
from core import charts
from review import editing, settling
from review.forms import field_labels
from review.models import Decision, GoldAnswer, Outcome, Review, Skip
from review.selectors import TERM_FIELDS, reviewer_gold_counts, sees_every_reviewer

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from review.quality.reviewers import Figure, Settled, Vote

DECISION = "decision"
SEED = 0
# The label fields whose values are categories (free text, such as a reference answer or an
# explanation, has no agreement worth a κ).
CATEGORICAL = frozenset({*TERM_FIELDS, "safety_label"})


def quality_fields(kind: str) -> tuple[str, ...]:
    """The fields a dataset kind's reviews carry a category for: the decision first."""
    return (DECISION, *(f for f in editing.reviewable_fields(kind) if f in CATEGORICAL))


@dataclass(frozen=True)
class KappaRow:
    co_reviewer: str
    figure: Figure


@dataclass(frozen=True)
class FieldRow:
    field: str
    label: str
    gold_accuracy: Figure
    outcome_agreement: Figure
    alpha_contribution: Figure
    kappas: list[KappaRow]


@dataclass(frozen=True)
class ReviewerRow:
    user_id: int
    username: str
    reviews: int
    gold_accuracy: Figure
    median_seconds: Figure
    reject_rate: Figure
    skip_rate: Figure
    fields: list[FieldRow]


@dataclass(frozen=True)
class ReviewerReport:
    fields: tuple[str, ...]
    rows: list[ReviewerRow]
    everyone: bool  # a lead's report (every reviewer) rather than one reviewer's own
    n_replicates: int
    seed: int
    chart: dict[str, Any]


def _text(value: Any) -> str | None:
    text = "" if value is None else str(value).strip()
    return text or None


@dataclass
class _Gathered:
    votes: list[Vote]
    settled: dict[int, Settled]
    names: dict[int, str]


def _gather(dataset: Dataset, fields: tuple[str, ...]) -> _Gathered:
    """The latest round's reviews as votes, and the settled samples' labels (three queries)."""
    from review.quality.reviewers import Settled, Vote

    labels = fields[1:]
    rows = list(
        Review.objects.filter(dataset=dataset)
        .order_by("sample_id", "round", "id")
        .values_list(
            "reviewer_id",
            "reviewer__username",
            "sample_id",
            "round",
            "decision",
            "values",
            "seconds_spent",
            "created_at",
            *(f"sample__{f}" for f in labels),
        )
    )
    latest: dict[int, int] = {}
    started: dict[int, Any] = {}
    current: dict[int, dict[str, Any]] = {}
    for row in rows:
        sample, review_round, created = row[2], row[3], row[7]
        if review_round > latest.get(sample, -1):
            latest[sample], started[sample] = review_round, created
        elif review_round == latest[sample]:
            started[sample] = min(started[sample], created)
        current[sample] = dict(zip(labels, row[8:], strict=True))
    # What a field held before the round's settlement or adjudication changed it: the value
    # a reviewer who left the field alone confirmed.
    before: dict[int, dict[str, Any]] = defaultdict(dict)
    for sample, changed_at, values in annotation_selectors.label_revisions(
        dataset=dataset, sources=[ChangeSource.REVIEW, ChangeSource.ADJUDICATION]
    ):
        if sample in started and changed_at >= started[sample]:
            for name in labels:
                if name in values and name not in before[sample]:
                    before[sample][name] = values[name]
    votes, names = [], {}
    for reviewer, username, sample, review_round, decision, edits, seconds, *_rest in rows:
        names[reviewer] = username
        if review_round != latest[sample]:
            continue
        base = current[sample] | before.get(sample, {})
        accepted = decision == Decision.ACCEPT
        vote_labels: dict[str, str | None] = {DECISION: decision}
        for name in labels:
            vote_labels[name] = _text(edits.get(name, base[name])) if accepted else None
        votes.append(Vote(reviewer, sample, vote_labels, float(seconds), not accepted))
    settled = {}
    for sample, status, adjudicated, by in Outcome.objects.filter(
        dataset=dataset, status__in=[settling.VERIFIED, settling.REJECTED]
    ).values_list("sample_id", "status", "adjudicated", "adjudicated_by_id"):
        if sample not in current:
            continue
        verified = status == settling.VERIFIED
        outcome: dict[str, str | None] = {
            DECISION: Decision.ACCEPT if verified else Decision.REJECT
        }
        for name in labels:
            outcome[name] = _text(current[sample][name]) if verified else None
        settled[sample] = Settled(outcome, by if adjudicated else None)
    return _Gathered(votes, settled, names)


def _figure_json(figure: Figure) -> list[Any]:
    return [figure.value, figure.ci_low, figure.ci_high, figure.n]


def _figure_of(stored: list[Any]) -> Figure:
    from review.quality.reviewers import Figure

    value, low, high, n = stored
    return Figure(value, low, high, n)


def reviewer_figures(*, dataset: Dataset, n_replicates: int | None = None) -> dict[str, Any]:
    """Every reviewer's figures on the dataset, as a worker stores them (JSON: co-reviewers by
    id and name, no translated text), in six queries. Each reader is shown the rows their
    role allows (``report_from_stored``)."""
    from review.quality.reviewers import N_REPLICATES, GoldResult, reviewer_quality

    replicates = n_replicates or N_REPLICATES
    gathered = _gather(dataset, quality_fields(dataset.kind))
    # The fields the reviews carry: a field no review gives a value (LogicVista has no
    # answerability group) has no figures worth a row.
    fields = (
        DECISION,
        *(
            f
            for f in quality_fields(dataset.kind)[1:]
            if any(v.labels[f] is not None for v in gathered.votes)
        ),
    )
    names = gathered.names
    gold = []
    answered: dict[int, set[int]] = defaultdict(set)
    for reviewer, username, sample, matches in GoldAnswer.objects.filter(
        dataset=dataset
    ).values_list("reviewer_id", "reviewer__username", "sample_id", "matches"):
        names[reviewer] = username
        gold.append(GoldResult(reviewer, matches))
        answered[reviewer].add(sample)
    skipped: dict[int, set[int]] = defaultdict(set)
    for reviewer, username, sample in Skip.objects.filter(dataset=dataset).values_list(
        "reviewer_id", "reviewer__username", "sample_id"
    ):
        names[reviewer] = username
        skipped[reviewer].add(sample)
    figures = reviewer_quality(
        fields=fields,
        votes=gathered.votes,
        settled=gathered.settled,
        gold=gold,
        gold_counts=reviewer_gold_counts(dataset=dataset),
        skipped=skipped,
        gold_answered=answered,
        reviewers=sorted(names, key=lambda r: (names[r], r)),
        n_replicates=replicates,
        seed=SEED,
    )
    rows = [
        {
            "user_id": quality.reviewer,
            "username": names[quality.reviewer],
            "reviews": quality.reviews,
            "gold_accuracy": _figure_json(quality.gold_accuracy),
            "median_seconds": _figure_json(quality.median_seconds),
            "reject_rate": _figure_json(quality.reject_rate),
            "skip_rate": _figure_json(quality.skip_rate),
            "fields": [
                {
                    "field": fq.field,
                    "gold_accuracy": _figure_json(fq.gold_accuracy),
                    "outcome_agreement": _figure_json(fq.outcome_agreement),
                    "alpha_contribution": _figure_json(fq.alpha_contribution),
                    "kappas": [
                        [other, names[other], _figure_json(figure)]
                        for other, figure in fq.kappas.items()
                    ],
                }
                for fq in quality.fields
            ],
        }
        for quality in figures
    ]
    return {
        "fields": list(fields),
        "n_replicates": replicates,
        "seed": SEED,
        "reviews": len(gathered.votes),
        "rows": rows,
    }


def _empty_row(user: User, fields: tuple[str, ...]) -> dict[str, Any]:
    """The row of a reader who has neither reviewed, skipped nor answered a gold item."""
    empty = [None, None, None, 0]
    figures = ("gold_accuracy", "outcome_agreement", "alpha_contribution")
    return {
        "user_id": user.pk,
        "username": user.get_username(),
        "reviews": 0,
        **dict.fromkeys(("gold_accuracy", "median_seconds", "reject_rate", "skip_rate"), empty),
        "fields": [{"field": f, **dict.fromkeys(figures, empty), "kappas": []} for f in fields],
    }


def report_from_stored(result: dict[str, Any], *, user: User, preset: str) -> ReviewerReport:
    """The stored figures as ``user`` may see them: a lead every reviewer, anyone else only
    their own row with their co-reviewers unnamed; field labels in the reader's language."""
    everyone = sees_every_reviewer(user)
    fields = tuple(result["fields"])
    stored_rows = result["rows"]
    if not everyone:
        own = [row for row in stored_rows if row["user_id"] == user.pk]
        stored_rows = own or [_empty_row(user, fields)]
    labels = {DECISION: str(_("Decision")), **field_labels(preset=preset)}
    rows = []
    for row in stored_rows:
        field_rows = []
        for fq in row["fields"]:
            kappas = [
                KappaRow(
                    name if everyone else _("co-reviewer %(n)s") % {"n": position},
                    _figure_of(figure),
                )
                for position, (_other, name, figure) in enumerate(fq["kappas"], start=1)
            ]
            field_rows.append(
                FieldRow(
                    fq["field"],
                    labels[fq["field"]],
                    _figure_of(fq["gold_accuracy"]),
                    _figure_of(fq["outcome_agreement"]),
                    _figure_of(fq["alpha_contribution"]),
                    kappas,
                )
            )
        rows.append(
            ReviewerRow(
                user_id=row["user_id"],
                username=row["username"],
                reviews=row["reviews"],
                gold_accuracy=_figure_of(row["gold_accuracy"]),
                median_seconds=_figure_of(row["median_seconds"]),
                reject_rate=_figure_of(row["reject_rate"]),
                skip_rate=_figure_of(row["skip_rate"]),
                fields=field_rows,
            )
        )
    chart = charts.scatter(
        [
            (
                row.username,
                row.reviews,
                row.gold_accuracy.value,
                row.gold_accuracy.ci_low,
                row.gold_accuracy.ci_high,
            )
            for row in rows
            if row.gold_accuracy.value is not None
        ]
    )
    return ReviewerReport(fields, rows, everyone, result["n_replicates"], result["seed"], chart)


def reviewer_report(
    *, dataset: Dataset, user: User, n_replicates: int | None = None
) -> ReviewerReport:
    """The Reviewers page of a dataset as ``user`` may see it, computed here and now in seven
    queries (scripts and tests; pages and the API read what a worker stored, see
    ``review.quality.computations``)."""
    result = reviewer_figures(dataset=dataset, n_replicates=n_replicates)
    return report_from_stored(result, user=user, preset=dataset.preset)
