"""Background jobs whose row in the database is the truth, not the broker's message.

Every app's job model inherits :class:`RecoverableJob` (an attempt count, a heartbeat and the
time its task was last sent) next to its own ``status`` and ``message`` fields. A worker
*claims* a job before working on it (``job_claim``): a queued job, or a running one whose
heartbeat stopped (its worker died), becomes running under a new attempt number. While it
works, ``job_heartbeat`` beats from a thread and ``Heartbeat.beat`` at each batch; every write
of the worker is fenced by its attempt number, so a worker whose job was cancelled or taken
over stops instead of writing over the newer attempt. Each app's periodic sweep
(``job_sweep``, run by Celery beat) queues again the jobs whose heartbeat stopped, fails them
with the reason after ``JOB_MAX_ATTEMPTS`` attempts, and sends again the tasks of queued jobs
whose message was lost (a restarted broker). ``job_send`` never lets a broker that is down
turn a request into an error: the job stays queued and the sweep sends it later.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connections, models, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

logger = logging.getLogger(__name__)

# Queued tasks older than this many sweep timeouts are sent again even while the broker's
# queue is not empty (a backlog may hide lost messages, but not for ever).
LOST_AFTER_TIMEOUTS = 10
# The queued_at of a job whose task the broker did not take: known lost, so the sweep sends it
# in its first round once the broker answers instead of waiting for the lost-message timeout.
NEVER_SENT = datetime(1970, 1, 1, tzinfo=UTC)


class JobStatus(models.TextChoices):
    QUEUED = "queued", gettext_lazy("Queued")
    RUNNING = "running", gettext_lazy("Running")
    SUCCEEDED = "succeeded", gettext_lazy("Succeeded")
    FAILED = "failed", gettext_lazy("Failed")
    CANCELLED = "cancelled", gettext_lazy("Cancelled")


ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)
RETRYABLE = (JobStatus.FAILED, JobStatus.CANCELLED)


class RecoverableJob(models.Model):
    """The fields that let a job outlive its worker and its broker."""

    attempts = models.PositiveSmallIntegerField(gettext_lazy("attempts"), default=0)
    heartbeat_at = models.DateTimeField(gettext_lazy("last heartbeat"), null=True, blank=True)
    queued_at = models.DateTimeField(gettext_lazy("queued at"), default=timezone.now)

    class Meta:
        abstract = True


class JobStopped(Exception):
    """The job is no longer this attempt's (cancelled, or taken over): stop without writing."""


@dataclass(frozen=True)
class Claim:
    """A worker's hold on a job: the attempt number that fences its writes."""

    model: type[models.Model]
    pk: int
    attempt: int

    def mine(self) -> models.QuerySet[Any]:
        return self.model._default_manager.filter(
            pk=self.pk, status=JobStatus.RUNNING, attempts=self.attempt
        )


def stale_after() -> timedelta:
    return timedelta(seconds=settings.JOB_STALE_SECONDS)


def _ended_fields(model: type[models.Model], now: datetime) -> dict[str, Any]:
    names = {f.name for f in model._meta.get_fields()}
    return {"finished_at": now} if "finished_at" in names else {}


def gave_up_message(attempts: int, last: str) -> str:
    message = _(
        "Given up after %(attempts)s attempts: its worker stopped or it failed each time. "
        "Press Retry to run it again."
    ) % {"attempts": attempts}
    return f"{message} {last}".strip()


def job_claim(model: type[models.Model], pk: int, *, now: datetime | None = None) -> Claim | None:
    """Take a queued job, or a running one whose heartbeat stopped, for this worker.

    Returns None when the job is gone, finished, or alive in another worker (a redelivered
    message), and fails it with the reason once it has used up its attempts.
    """
    now = now or timezone.now()
    manager = model._default_manager
    with transaction.atomic():
        row = (
            manager.select_for_update()
            .filter(pk=pk)
            .values("status", "attempts", "heartbeat_at", "message")
            .first()
        )
        if row is None or row["status"] not in ACTIVE:
            return None
        beat = row["heartbeat_at"]
        if row["status"] == JobStatus.RUNNING and beat is not None and beat > now - stale_after():
            return None
        if row["attempts"] >= settings.JOB_MAX_ATTEMPTS:
            manager.filter(pk=pk).update(
                status=JobStatus.FAILED,
                message=gave_up_message(row["attempts"], row["message"]),
                **_ended_fields(model, now),
            )
            return None
        attempt = row["attempts"] + 1
        manager.filter(pk=pk).update(
            status=JobStatus.RUNNING, attempts=attempt, heartbeat_at=now, message=""
        )
    return Claim(model, pk, attempt)


def job_finish(claim: Claim, *, status: str, message: str = "", **fields: Any) -> bool:
    """End a claimed job (unless it was cancelled or taken over meanwhile). A message that
    names a value holding NUL (a whole file's problem) is stored with it written as \\u0000:
    PostgreSQL refuses NUL in text, and the job would end as an internal error instead."""
    now = timezone.now()
    return bool(
        claim.mine().update(
            status=status,
            message=message.replace("\x00", "\\u0000"),
            heartbeat_at=now,
            **{**_ended_fields(claim.model, now), **fields},
        )
    )


def job_release(claim: Claim, *, message: str, attempt_used: bool = True) -> bool:
    """Put a claimed job back in the queue (its task is sent again by the caller or a sweep).
    ``attempt_used=False`` gives the attempt back: the job could not work because a service
    it shares with every job was away (Redis), which says nothing about the job itself, so it
    waits for the service rather than running out of attempts."""
    fields: dict[str, Any] = {}
    if not attempt_used:
        fields["attempts"] = claim.attempt - 1
    return bool(
        claim.mine().update(
            status=JobStatus.QUEUED, queued_at=timezone.now(), message=message, **fields
        )
    )


# How long a job that waits for a service shared by every job (the media storage) waits
# before it tries again.
SERVICE_RETRY_SECONDS = 10


def job_wait(claim: Claim, *, message: str, send: Callable[[], object]) -> bool:
    """Put a claimed job back in the queue without using up its attempt, because a service
    every job shares is away (``core.outages``); ``send`` sends its task again (with a delay,
    ``SERVICE_RETRY_SECONDS``), and the sweep sends it should that fail. False when the job
    was no longer this attempt's."""
    if not job_release(claim, message=message, attempt_used=False):
        return False
    job_send_queued(claim.model, claim.pk, send)
    return True


class Heartbeat:
    """Beats for a claimed job: from a thread every JOB_HEARTBEAT_SECONDS while the worker
    lives, and from the working code at each batch (``beat``), which also notices a cancel."""

    def __init__(self, claim: Claim, interval: float) -> None:
        self.claim = claim
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{claim.pk}")
        self._thread.daemon = True

    def beat(self, **fields: Any) -> None:
        """Record progress (and any fields given); raise JobStopped if the job is not ours."""
        if not self.claim.mine().update(heartbeat_at=timezone.now(), **fields):
            raise JobStopped

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    self.claim.mine().update(heartbeat_at=timezone.now())
                except DatabaseError:
                    logger.warning("heartbeat of %s failed", self.claim, exc_info=True)
        finally:
            connections.close_all()  # this thread's own connections

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        # Never wait long: the thread may be waiting for a row lock this thread holds.
        self._thread.join(timeout=5)


@contextmanager
def job_heartbeat(claim: Claim) -> Iterator[Heartbeat]:
    with Heartbeat(claim, settings.JOB_HEARTBEAT_SECONDS) as heartbeat:
        yield heartbeat


def job_send(send: Callable[[], object]) -> bool:
    """Send a job's task; False (logged) when the broker cannot be reached."""
    try:
        send()
    except Exception:
        logger.warning("the broker did not take a task; the job sweep will send it", exc_info=True)
        return False
    return True


def job_send_queued(model: type[models.Model], pk: int, send: Callable[[], object]) -> bool:
    """Send the task of a queued job; when the broker does not take it, the job is marked as
    never sent, so the sweep's first round after the broker is back sends it again."""
    if job_send(send):
        return True
    model._default_manager.filter(pk=pk, status=JobStatus.QUEUED).update(queued_at=NEVER_SENT)
    return False


def job_enqueue(model: type[models.Model], pk: int, send: Callable[[], object]) -> bool:
    """Send a new job's task (call on commit). While the broker is down, the job stays queued
    with a note that it waits for it; the sweep sends it once the broker is back."""
    if job_send_queued(model, pk, send):
        return True
    model._default_manager.filter(pk=pk, status=JobStatus.QUEUED).update(
        message=broker_down_message()
    )
    return False


def broker_down_message() -> str:
    return _(
        "Waiting for the task queue, which cannot be reached right now: the job starts by "
        "itself once it is back."
    )


def job_retry_fields() -> dict[str, Any]:
    """The fields that put an ended job back in the queue as new (after the user's Retry)."""
    return {
        "status": JobStatus.QUEUED,
        "attempts": 0,
        "heartbeat_at": None,
        "queued_at": timezone.now(),
        "message": "",
    }


def broker_queue_size() -> int | None:
    """Messages waiting in this site's queue, or None when the broker cannot be asked."""
    from celery import current_app
    from kombu.exceptions import ChannelError

    name = current_app.conf.task_default_queue
    try:
        with current_app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1)
            try:
                channel: Any = connection.default_channel
                _name, count, _consumers = channel.queue_declare(queue=name, passive=True)
            except ChannelError:  # no such queue yet: nothing waits in it
                return 0
            return int(count)
    except Exception:
        logger.warning("could not read the size of the queue %s", name, exc_info=True)
        return None


@dataclass
class SweepResult:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    resent: list[int] = field(default_factory=list)


def job_sweep_dead(
    model: type[models.Model],
    *,
    send: Callable[[int], object],
    queryset: models.QuerySet[Any] | None = None,
    now: datetime | None = None,
) -> SweepResult:
    """Queue again the running jobs whose heartbeat stopped, or fail those out of attempts."""
    now = now or timezone.now()
    result = SweepResult()
    stale = Q(heartbeat_at__lt=now - stale_after()) | Q(heartbeat_at__isnull=True)
    rows = model._default_manager.all() if queryset is None else queryset
    dead = list(rows.filter(stale, status=JobStatus.RUNNING).values_list("pk", flat=True))
    for pk in dead:
        with transaction.atomic():
            row = (
                model._default_manager.select_for_update(skip_locked=True)
                .filter(stale, pk=pk, status=JobStatus.RUNNING)
                .values("attempts", "message")
                .first()
            )
            if row is None:
                continue
            locked = model._default_manager.filter(pk=pk)
            if row["attempts"] >= settings.JOB_MAX_ATTEMPTS:
                locked.update(
                    status=JobStatus.FAILED,
                    message=gave_up_message(row["attempts"], row["message"]),
                    **_ended_fields(model, now),
                )
                result.failed.append(pk)
                continue
            locked.update(
                status=JobStatus.QUEUED,
                queued_at=now,
                message=_(
                    "The worker running this job stopped; it was queued again "
                    "(attempt %(attempt)s of %(max)s next)."
                )
                % {"attempt": row["attempts"] + 1, "max": settings.JOB_MAX_ATTEMPTS},
            )
            result.requeued.append(pk)
        job_send_queued(model, pk, lambda pk=pk: send(pk))  # type: ignore[misc]
    return result


def job_sweep_lost(
    model: type[models.Model],
    *,
    send: Callable[[int], object],
    queryset: models.QuerySet[Any] | None = None,
    now: datetime | None = None,
) -> SweepResult:
    """Send again the tasks of jobs queued for longer than JOB_QUEUED_TIMEOUT_SECONDS that no
    worker has started, when the broker's queue is empty (so their messages were lost), or,
    whatever the queue holds, once they have waited ten times as long (at once for those whose
    task the broker did not take: ``NEVER_SENT``)."""
    now = now or timezone.now()
    result = SweepResult()
    timeout = timedelta(seconds=settings.JOB_QUEUED_TIMEOUT_SECONDS)
    rows = model._default_manager.all() if queryset is None else queryset
    waiting = rows.filter(status=JobStatus.QUEUED, queued_at__lt=now - timeout)
    if not waiting.exists():
        return result
    size = broker_queue_size()
    if size is None:
        return result  # the broker is down: nothing could be sent
    if size:
        waiting = waiting.filter(queued_at__lt=now - timeout * LOST_AFTER_TIMEOUTS)
    pks = list(waiting.values_list("pk", flat=True))
    model._default_manager.filter(pk__in=pks, status=JobStatus.QUEUED).update(queued_at=now)
    for pk in pks:
        if job_send_queued(model, pk, lambda pk=pk: send(pk)):  # type: ignore[misc]
            result.resent.append(pk)
    return result


def job_sweep(
    model: type[models.Model],
    *,
    send: Callable[[int], object],
    queryset: models.QuerySet[Any] | None = None,
) -> SweepResult:
    """Both sweeps over one kind of job: dead workers, then lost messages."""
    now = timezone.now()
    result = job_sweep_dead(model, send=send, queryset=queryset, now=now)
    result.resent = job_sweep_lost(model, send=send, queryset=queryset, now=now).resent
    return result
