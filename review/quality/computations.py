"""The Reviewers page's figures, computed by a worker and stored (``core.computations``).

Reading the page or the API never computes: it reads the stored figures, and compares the
state of the data behind them (one query: the counts and latest changes of the dataset's
reviews, skips, gold items and answers, outcomes, exclusions and samples) with the state the last
request saw. When the data changed (or nothing was ever computed), it requests the row: the
computation is queued once and sent ``COMPUTE_DELAY_SECONDS`` later, so that a burst of
page views or reviews costs one run; a change while it runs is followed by one more run. The
run is a recoverable job (claimed, heartbeat, fenced by its attempt); review's periodic sweep
runs again a computation whose worker died, so none stays "computing" for ever.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Count, Max, OuterRef, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Dataset, Sample
from core import computations
from core.computations import Stored, computation_request, stored_state
from core.jobs import SweepResult, job_enqueue, job_sweep
from core.tasks import enqueue
from review import models
from review.quality.selectors import ReviewerReport, report_from_stored, reviewer_figures

if TYPE_CHECKING:
    from django.contrib.auth.models import User

TASK_NAME = "review.compute_reviewer_quality"
COMPUTE_DELAY_SECONDS = 5.0


def _aggregate(model: Any, key: str, function: Any, field: str) -> Subquery:
    """One figure (count, latest id or time) of a table's rows of the outer dataset."""
    rows = model.objects.filter(dataset=OuterRef("pk")).order_by().values("dataset")
    return Subquery(rows.annotate(**{key: function(field)}).values(key)[:1])


# What the figures read, table by table: a change to any of them changes one of its figures.
_STATE = {
    "reviews": (models.Review, Count, "id"),
    "last_review": (models.Review, Max, "id"),
    "skips": (models.Skip, Count, "id"),
    "last_skip": (models.Skip, Max, "id"),
    "gold_items": (models.GoldItem, Count, "id"),
    "last_gold_item": (models.GoldItem, Max, "id"),
    "gold_answers": (models.GoldAnswer, Count, "id"),
    "last_gold_answer": (models.GoldAnswer, Max, "id"),
    "outcomes": (models.Outcome, Count, "id"),
    "last_outcome": (models.Outcome, Max, "decided_at"),
    "exclusions": (models.ReviewerExclusion, Count, "id"),
    "last_exclusion": (models.ReviewerExclusion, Max, "id"),
    # A sample's labels edited after its settlement change what its outcome says.
    "last_sample_change": (Sample, Max, "updated_at"),
}


def data_state(*, dataset: Dataset, since: datetime | None = None) -> dict[str, Any]:
    """The state of the data behind the figures (JSON), and under ``reviews_since`` the reviews
    submitted at or after ``since``; one query."""
    annotations: dict[str, Any] = {
        key: _aggregate(model, key, function, field)
        for key, (model, function, field) in _STATE.items()
    }
    if since is not None:
        recent = models.Review.objects.filter(dataset=OuterRef("pk"), created_at__gte=since)
        counted = recent.order_by().values("dataset").annotate(n=Count("id")).values("n")[:1]
        annotations["reviews_since"] = Coalesce(Subquery(counted), 0)
    state = Dataset.objects.filter(pk=dataset.pk).annotate(**annotations).values(*annotations).get()
    return {
        key: value.isoformat() if isinstance(value, datetime) else (value or 0)
        for key, value in state.items()
    }


def computation_send(pk: int) -> None:
    """Send a queued computation's task (a few seconds later, so a burst of changes costs one
    run); while the broker is down the sweep sends it."""
    job_enqueue(
        models.ReviewerQualityComputation,
        pk,
        lambda: enqueue(TASK_NAME, pk, countdown=COMPUTE_DELAY_SECONDS),
    )


def reviewer_quality_request(
    *, dataset: Dataset, state: dict[str, Any] | None = None, send: bool = True
) -> int:
    """Request the dataset's figures (their data changed, or were never computed): the row is
    queued unless it already is, and its task sent once the current transaction commits."""
    state = state if state is not None else data_state(dataset=dataset)
    return computation_request(
        models.ReviewerQualityComputation,
        scope={"dataset_id": dataset.pk},
        fields={"requested_state": state},
        send=(lambda pk: transaction.on_commit(lambda: computation_send(pk))) if send else None,
    )


def _compute(row: models.ReviewerQualityComputation) -> dict[str, Any]:
    dataset = Dataset.objects.get(pk=row.dataset_id)
    # The state first: data that changes while the figures are read is counted again.
    state = data_state(dataset=dataset)
    return {**reviewer_figures(dataset=dataset), "state": state}


def computation_run(*, computation_id: int) -> models.ReviewerQualityComputation | None:
    """Compute a queued row and store the figures (safe to run twice: a row computed or being
    computed by a live worker is left alone); a request that came in meanwhile queues the
    next run."""
    return computations.computation_run(
        models.ReviewerQualityComputation, computation_id, compute=_compute, send=computation_send
    )


def reviewer_quality_compute(*, dataset: Dataset) -> models.ReviewerQualityComputation | None:
    """Request and compute the figures at once, in this process (scripts, benches, tests)."""
    pk = reviewer_quality_request(dataset=dataset, send=False)
    return computation_run(computation_id=pk)


def computations_sweep() -> SweepResult:
    """Run again the computations whose worker died; send those whose message was lost."""
    return job_sweep(models.ReviewerQualityComputation, send=lambda pk: enqueue(TASK_NAME, pk))


@dataclass(frozen=True)
class StoredReport:
    """What the page and the API show: the stored figures as the reader may see them (None
    before the first computation), the state of their computation, and how many reviews were
    submitted since the data they reflect was read."""

    report: ReviewerReport | None
    stored: Stored
    reviews_since: int

    def as_api(self) -> dict[str, Any]:
        return {**self.stored.as_api(), "reviews_since": self.reviews_since}


def reviewer_report_read(*, dataset: Dataset, user: User) -> StoredReport:
    """The stored figures of a dataset as ``user`` may see them, never computed here: when the
    data changed since the last request (or nothing was ever requested), a computation is
    requested. Two queries when the data is unchanged, a few more when it is requested."""
    row = models.ReviewerQualityComputation.objects.filter(dataset=dataset).first()
    computed_at = row.computed_at if row is not None else None
    state = data_state(dataset=dataset, since=computed_at)
    reviews_since = int(state.pop("reviews_since", 0))
    if row is None or row.requested_state != state:
        reviewer_quality_request(dataset=dataset, state=state)
        row = models.ReviewerQualityComputation.objects.get(dataset=dataset)
    stored = stored_state(row)
    report = None
    if stored.result is not None:
        report = report_from_stored(stored.result, user=user, preset=dataset.preset)
    return StoredReport(report, stored, reviews_since)


def reviewer_quality_state(*, dataset: Dataset) -> dict[str, Any]:
    """The state of the dataset's computation, for a page that waits for it (one query)."""
    row = models.ReviewerQualityComputation.objects.filter(dataset=dataset).first()
    state = stored_state(row).as_api()
    return state | {"finished": not state["computing"]}
