"""Start a judge job: ``run_judges --dataset NAME --task answerability|scoring --judges A,B``."""

from __future__ import annotations

import time
from argparse import ArgumentParser
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Dataset
from judging import selectors, services
from judging.models import JudgeJob


class Command(BaseCommand):
    help = (
        "Queue a judge job for the workers; --wait shows its progress and exits when it ends "
        "(non-zero when it failed or was cancelled)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--task", required=True, choices=["answerability", "scoring"])
        parser.add_argument("--judges", required=True, help="comma-separated judge names")
        parser.add_argument("--models", default="", help="comma-separated evaluated models")
        parser.add_argument(
            "--samples-per-judge-call",
            type=int,
            default=1,
            dest="repeats",
            help="k votes per item and judge (temperature > 0), stored with a repeat index",
        )
        parser.add_argument("--chunk-size", type=int, default=50)
        parser.add_argument("--wait", action="store_true")
        parser.add_argument("--poll", type=float, default=1.0, help="seconds between updates")
        parser.add_argument("--timeout", type=float, default=None, help="give up waiting after")

    def handle(self, *args: Any, **options: Any) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"No dataset named {options['dataset']!r}.")
        names = [n.strip() for n in options["judges"].split(",") if n.strip()]
        judges, unknown = selectors.judges_by_names(names)
        if unknown:
            raise CommandError(f"Unknown judges: {', '.join(unknown)} (add them with add_judge).")
        models = [m.strip() for m in options["models"].split(",") if m.strip()]
        try:
            job = services.judge_job_start(
                dataset=dataset,
                task=options["task"],
                judges=judges,
                repeats=options["repeats"],
                model_names=models,
                chunk_size=options["chunk_size"],
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(f"Queued job {job.pk} ({job.task}) on {dataset.name}.")
        if options["wait"]:
            self._wait(job, options["poll"], options["timeout"])

    def _wait(self, job: JudgeJob, poll: float, timeout: float | None) -> None:
        started = time.monotonic()
        last = None
        while True:
            job.refresh_from_db()
            progress = selectors.job_progress(job=job)
            line = (
                f"{progress.status}: {progress.done}/{progress.total} verdicts "
                f"({progress.percent}%), {progress.errors} errors, "
                f"{progress.verdicts_per_second or 0} /s, "
                f"{progress.prompt_tokens + progress.completion_tokens} tokens"
            )
            if line != last:
                self.stdout.write(line)
                last = line
            if job.is_finished:
                break
            if timeout is not None and time.monotonic() - started > timeout:
                raise CommandError(f"Job {job.pk} still running after {timeout:g} s.")
            time.sleep(poll)  # a progress display, not synchronisation
        if progress.message:
            self.stdout.write(progress.message)
        if progress.status != "succeeded":
            raise CommandError(f"Job {job.pk} ended {progress.status}.")
