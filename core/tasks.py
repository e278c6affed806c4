"""Queue background work by task name, so that services never import a tasks module.

Tasks import the services they call; were the services to import the tasks back, the two
would form an import cycle. Every task of the project has an explicit ``name=``.
"""

from __future__ import annotations

from typing import Any

from celery import current_app


def enqueue(name: str, *args: Any, countdown: float | None = None) -> None:
    """Send the task registered under ``name`` with ``args`` (run inline when eager), after
    ``countdown`` seconds when given."""
    app = current_app
    if name not in app.tasks:  # the tasks modules load on the first use, not on every call
        app.loader.import_default_modules()
    task = app.tasks[name]
    if countdown is None:
        task.delay(*args)
    else:
        task.apply_async(args, countdown=countdown)
