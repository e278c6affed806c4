"""python manage.py send_to_review --dataset NAME [--status imported] [--user USERNAME]

Moves a dataset's samples of one status (imported by default) to "pending review", writing each
move to the sample's history, and opens their review slots: the same service as the sample
list's bulk action and ``POST /api/datasets/{id}/send-to-review/``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation import services
from annotation.models import Dataset, Sample, SampleStatus
from annotation.services.bulk import SENDABLE


class Command(BaseCommand):
    help = (
        "Send a dataset's samples of one status (imported by default) to review and open "
        "their review slots; prints how many samples were sent and how many slots opened."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, help="the dataset's name")
        parser.add_argument(
            "--status",
            default=SampleStatus.IMPORTED,
            choices=[str(s) for s in SENDABLE],
            help="send the samples in this status (default: imported)",
        )
        parser.add_argument("--user", default="", help="record the moves as this user's")

    def handle(self, *args: Any, **options: Any) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"].strip()).first()
        if dataset is None:
            raise CommandError(f"There is no dataset named {options['dataset']!r}.")
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"There is no user named {options['user']!r}.")
        status = options["status"]
        try:
            result = services.samples_send_to_review(
                dataset=dataset,
                samples=Sample.objects.filter(dataset=dataset, status=status),
                by=user,
                from_statuses=[status],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(
            f"Sent {result.changed} {status} samples of {dataset.name!r} to review; "
            f"opened {result.slots_opened} review slots."
        )
