"""Queue background work by task name, so that services never import a tasks module.

Tasks import the services they call; were the services to import the tasks back, the two
would form an import cycle. Every task of the project has an explicit ``name=``.
"""

from __future__ import annotations

from typing import Any

from celery import current_app
from django.db import DatabaseError

# The options of a task that runs a stored job: acknowledged once it ends (so a killed
# worker's message is delivered again) and retried with a growing delay while the database
# is away. Use as ``@shared_task(name=..., **RETRY_ON_DATABASE_ERROR)``.
RETRY_ON_DATABASE_ERROR: dict[str, Any] = {
    "acks_late": True,
    "autoretry_for": (DatabaseError,),
    "retry_backoff": True,
    "max_retries": 5,
}


def enqueue(name: str, *args: Any, countdown: float | None = None) -> None:
    """Send the task registered under ``name`` with ``args`` (run inline when eager), after
    ``countdown`` seconds when given."""
    app = current_app
    if name not in app.tasks:
        # Loads the task modules once; each call also runs Celery's Django fix-up, which
        # validates every model (about 0.1-0.4 s), so it is not repeated per task sent.
        app.loader.import_default_modules()
    task = app.tasks[name]
    if countdown is None:
        task.delay(*args)
    else:
        task.apply_async(args, countdown=countdown)
