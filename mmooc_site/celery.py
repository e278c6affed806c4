"""The Celery app. Brokers: Redis in production and CI; a safe filesystem broker locally."""

from __future__ import annotations

import gc
import os
from typing import Any

from celery import Celery
from celery.signals import worker_before_create_process
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings")

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
