"""Figures computed by a worker, off the request path, stored for pages and the API to read.

The generic side of a stored computation (any app's): a row per scope (a dataset, an audit
set...) that holds the last result, the time of the data it reflects, and the state of its
next run. A change to the data *requests* the row: it is queued once and its task sent a few
seconds later (the caller's countdown), so a burst of changes costs one run; a request while
it runs is followed by one more run after it. The run is a recoverable job (``core.jobs``):
claimed, beating a heartbeat, fenced by its attempt, run again by the app's sweep when its
worker died, so that no computation stays "computing" for ever. The stored result stays
readable throughout.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.db import IntegrityError, models, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy

from core import jobs
from core.jobs import ACTIVE, JobStatus, JobStopped, RecoverableJob

logger = logging.getLogger(__name__)


class StoredComputation(RecoverableJob):
    """A stored result and the state of its next run (queued → running → succeeded)."""

    status = models.CharField(
        gettext_lazy("status"), max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED
    )
    message = models.TextField(gettext_lazy("message"), blank=True, default="")
    # The last time the data behind the row changed, and the time the current (or last) run
    # read it: a run whose start is older than the last request is followed by another.
    requested_at = models.DateTimeField(gettext_lazy("requested at"), default=timezone.now)
    started_at = models.DateTimeField(gettext_lazy("started at"), null=True, blank=True)
    # The stored result and the time of the data it reflects (its run's start).
    computed_at = models.DateTimeField(gettext_lazy("computed at"), null=True, blank=True)
    seconds = models.FloatField(gettext_lazy("seconds taken"), null=True, blank=True)
    result = models.JSONField(gettext_lazy("result"), null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def computing(self) -> bool:
        """A newer result is queued or being computed."""
        return self.status in ACTIVE


Row = TypeVar("Row", bound=StoredComputation)


def computation_request(
    model: type[StoredComputation],
    *,
    scope: dict[str, Any],
    fields: dict[str, Any] | None = None,
    send: Callable[[int], object] | None = None,
) -> int:
    """Mark the data of the row of ``scope`` as changed (creating the row), storing ``fields``
    with it; queue its computation unless one is already queued (a running one is followed by
    another when it ends) and then call ``send`` with the row's id. Returns the row's id."""
    now = timezone.now()
    manager = model._default_manager
    fields = {"requested_at": now, **(fields or {})}
    with transaction.atomic():
        try:
            with transaction.atomic():
                _row, created = manager.get_or_create(**scope, defaults=fields)
        except IntegrityError:  # a concurrent request created it
            created = False
        row = manager.select_for_update().get(**scope)
        queued = created
        if row.status not in ACTIVE:
            fields |= jobs.job_retry_fields()
            queued = True
        if not created:
            manager.filter(pk=row.pk).update(**fields)
    if queued and send is not None:
        send(row.pk)
    return int(row.pk)


def computation_run(
    model: type[Row],
    pk: int,
    *,
    compute: Callable[[Row], dict[str, Any]],
    send: Callable[[int], object],
) -> Row | None:
    """Compute a queued row and store its result (safe to run twice: a row computed or being
    computed by a live worker is left alone). A request that came in while it ran queues the
    next run (``send``). A failure keeps the last result and records the reason."""
    manager = model._default_manager
    claim = jobs.job_claim(model, pk)
    if claim is None:
        return manager.filter(pk=pk).first()
    started = timezone.now()
    claim.mine().update(started_at=started)
    row = manager.get(pk=pk)
    began = time.monotonic()
    try:
        with jobs.job_heartbeat(claim):
            result = compute(row)
        again = _store(claim, result, started, time.monotonic() - began)
    except JobStopped:
        logger.info("computation %s %s was taken over", model.__name__, pk)
        again = False
    except Exception as exc:
        logger.exception("computation %s %s failed", model.__name__, pk)
        jobs.job_finish(claim, status=JobStatus.FAILED, message=f"{type(exc).__name__}: {exc}")
        again = False
    if again:
        send(pk)
    return manager.filter(pk=pk).first()


def _store(claim: jobs.Claim, result: dict[str, Any], started: datetime, seconds: float) -> bool:
    """Store the result; True when a newer request came in meanwhile (and the row is queued)."""
    with transaction.atomic():
        row = claim.mine().select_for_update().values("requested_at").first()
        if row is None:
            raise JobStopped
        jobs.job_finish(
            claim,
            status=JobStatus.SUCCEEDED,
            result=result,
            computed_at=started,
            seconds=round(seconds, 3),
        )
        if row["requested_at"] <= started:
            return False
        claim.model._default_manager.filter(pk=claim.pk).update(**jobs.job_retry_fields())
        return True


@dataclass(frozen=True)
class Stored:
    """What a page shows of a stored computation: its result (None before the first), when it
    was computed, whether a newer one is on its way, and why the last one failed."""

    result: dict[str, Any] | None
    computed_at: datetime | None
    computing: bool
    failed: str
    seconds: float | None
    status: str = JobStatus.QUEUED

    def as_api(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "computed_at": self.computed_at.isoformat() if self.computed_at else None,
            "computing": self.computing,
            "failed": self.failed,
            "seconds": self.seconds,
        }


def stored_state(row: StoredComputation | None) -> Stored:
    """A row as pages read it (no row yet: being computed, nothing to show)."""
    if row is None:
        return Stored(None, None, True, "", None)
    failed = row.message if row.status == JobStatus.FAILED else ""
    return Stored(row.result, row.computed_at, row.computing, failed, row.seconds, row.status)
