"""A Celery app of its own, without Django, for tests of the broker transport itself: one
task that holds its pool process until a file appears. ``PROBE_BROKER`` is the broker's URL,
``PROBE_TRANSPORT=site`` serves redis:// by the site's transport (mmooc_site.redisbroker)
rather than kombu's own, ``PROBE_DIR`` the folder of the marker files.

Run as ``celery -A tests.support.celery_probe worker``, with the settings of the site's
workers that matter here (late acks, one message prefetched per process).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

if os.environ.get("PROBE_TRANSPORT") == "site":
    TRANSPORT_ALIASES["redis"] = "mmooc_site.redisbroker:Transport"

# Not the current app: the test process importing this module keeps the site's app current.
app = Celery("probe", broker=os.environ.get("PROBE_BROKER", "memory://"), set_as_current=False)
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_ignore_result=True,
    task_default_queue="probe",
    broker_connection_retry_on_startup=True,
    worker_cancel_long_running_tasks_on_connection_loss=False,
    task_publish_retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.2},
)


@app.task(name="probe.hold")
def hold(name: str) -> None:
    """Write ``<name>.started``, then wait (at most a minute) for ``<name>.release``."""
    folder = Path(os.environ["PROBE_DIR"])
    (folder / f"{name}.started").write_text(str(os.getpid()))
    deadline = time.monotonic() + 60
    while not (folder / f"{name}.release").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    (folder / f"{name}.done").write_text("")
