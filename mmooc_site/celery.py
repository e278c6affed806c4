"""The Celery app. Brokers: Redis in production and CI; a safe filesystem broker locally."""

from __future__ import annotations

import gc
import os
from typing import Any

from celery import Celery, bootsteps
from celery.signals import worker_before_create_process
from click import Option
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings.production")

# kombu's own filesystem transport loses messages under concurrency (celery/kombu#1551);
# "filesystem://" is served by the patched transport instead. Its Redis transport makes a
# worker exit when Redis drops while a message is unacknowledged (mmooc_site.redisbroker).
TRANSPORT_ALIASES["filesystem"] = "mmooc_site.fsbroker:Transport"
TRANSPORT_ALIASES["redis"] = TRANSPORT_ALIASES["rediss"] = "mmooc_site.redisbroker:Transport"

app = Celery("mmooc_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_before_create_process.connect
def freeze_before_fork(**kwargs: Any) -> None:
    """Before the prefork pool forks a child, move what the main process has loaded (Django,
    the task modules) out of the garbage collector's reach, so that the children share those
    pages instead of copying them when a collection touches them."""
    gc.collect()
    gc.freeze()


class BeatThread(bootsteps.StartStopStep):
    """Celery beat as a thread of the worker's main process: ``celery worker --beat-thread``.

    ``-B`` runs beat as a process of its own, forked early and not frozen, about 60 MB PSS
    (a separate ``celery beat``, with Django loaded, about 90 MB); as a thread it costs the
    main process about nothing, and it lives and dies with the worker, which the launcher
    starts again (mmooc_site/launch.py, deploy/supervisord.conf). Started after the pool has
    forked its processes; beat's scheduler is Celery's own (``celery.beat.EmbeddedService``,
    threaded). Run it in exactly one worker."""

    label = "Beat thread"
    conditional = True
    requires = ("celery.worker.components:Pool",)

    def __init__(self, worker: Any, beat_thread: bool = False, **kwargs: Any) -> None:
        self.enabled = bool(beat_thread)
        super().__init__(worker, **kwargs)

    def create(self, worker: Any) -> Any:
        from celery.beat import EmbeddedService

        return EmbeddedService(
            worker.app,
            thread=True,
            schedule_filename=worker.schedule_filename,
            scheduler_cls=worker.scheduler,
        )


app.user_options["worker"].add(
    Option(
        ["--beat-thread"],
        is_flag=True,
        default=False,
        help="Run Celery beat (the periodic job sweeps) as a thread of this worker.",
    )
)
app.steps["worker"].add(BeatThread)
