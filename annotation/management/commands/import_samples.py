"""python manage.py import_samples SOURCE --dataset NAME --format FORMAT [--preset PRESET]

Runs the import inline, in this process, through the same service a worker runs
(``import_job_run``), so the job, its counts and its row errors are recorded as for an upload.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.imports import services as import_services
from annotation.imports.formats import FORMATS
from annotation.imports.selectors import import_row_errors
from annotation.models import ImportJobStatus, ImportSourceKind
from annotation.presets import PRESETS


class Command(BaseCommand):
    help = (
        "Import candidate samples from a file, a folder, a zip or an s3://bucket/prefix into a "
        "dataset (created when missing). Exits with status 1 when any row was rejected."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", help="a file, folder or zip path, or s3://bucket/prefix")
        parser.add_argument("--dataset", required=True, help="the dataset's name")
        parser.add_argument("--format", required=True, choices=sorted(FORMATS))
        parser.add_argument(
            "--preset",
            default="",
            choices=["", *sorted(PRESETS)],
            help=(
                "taxonomy preset of a dataset created by this import (default: the format's "
                "own: mmooc for mmooc, mmt_bench for vlmevalkit, mcbench for trimodal)"
            ),
        )
        parser.add_argument("--file", default="", help="the dataset file inside a folder or zip")
        parser.add_argument("--image-dir", default="", help="LogicVista: the images folder")
        parser.add_argument("--user", default="", help="record the import as this user's")

    def handle(self, *args: Any, **options: Any) -> None:
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"There is no user named {options['user']!r}.")
        source: str = options["source"]
        is_s3 = source.startswith("s3://")
        source_kind = ImportSourceKind.S3_PREFIX if is_s3 else ImportSourceKind.SERVER_PATH
        source = source if is_s3 else str(Path(source).absolute())
        job_options = {"file": options["file"], "image_dir": options["image_dir"]}
        try:
            dataset, created = import_services.import_dataset_prepare(
                name=options["dataset"],
                format=options["format"],
                preset=options["preset"],
                source_kind=source_kind,
                source=source,
                options=job_options,
                created_by=user,
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        try:
            job = import_services.import_job_create(
                dataset=dataset,
                format=options["format"],
                source_kind=source_kind,
                source=source,
                options=job_options,
                created_by=user,
                trusted=True,
                queue=False,
            )
        except ValidationError as exc:
            if created:
                import_services.import_dataset_discard(dataset=dataset)
            raise CommandError(" ".join(exc.messages)) from exc
        finished = import_services.import_job_run(job_id=job.pk)
        assert finished is not None
        job = finished
        self.stdout.write(
            f"Import job {job.pk} into {dataset.name!r}: {job.get_status_display()}\n"
            f"  rows:      {job.rows_done} of {job.total_rows or 0}\n"
            f"  imported:  {job.imported}\n"
            f"  unchanged: {job.unchanged}\n"
            f"  updated:   {job.updated}\n"
            f"  rejected:  {job.rejected}"
        )
        for error in import_row_errors(job=job).iterator():
            label = f"{error.row} ({error.external_id})" if error.external_id else f"{error.row}"
            self.stdout.write(f"  row {label}: {error.message}")
        if created and import_services.import_dataset_discard(dataset=dataset):
            self.stdout.write(
                f"The dataset {dataset.name!r} was not kept: the import added no sample to it."
            )
        if job.status not in (ImportJobStatus.SUCCEEDED, ImportJobStatus.SUCCEEDED_WITH_ERRORS):
            raise CommandError(job.message)
        if job.rejected:
            raise CommandError(f"{job.rejected} rows were rejected.")
