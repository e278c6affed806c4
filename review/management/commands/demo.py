"""python manage.py demo: demo users (one per role), a small dataset of each kind, queues open.

A site-level command: the data comes from annotation's demo, and the review queues are opened
through review's services, so annotators can start reviewing at once.
"""

from typing import Any

from django.core.management.base import BaseCommand

from annotation.demo import demo_load
from annotation.models import Dataset
from review.queue import services as queue_services


class Command(BaseCommand):
    help = "Create demo users (one per role) and a small demo dataset of each kind."

    def handle(self, *args: Any, **options: Any) -> None:
        logins = demo_load()
        for dataset in Dataset.objects.filter(name__startswith="Demo "):
            queue_services.queue_sync(dataset=dataset)
        self.stdout.write("Demo logins (username / password / role):")
        for login in logins:
            self.stdout.write(f"  {login.username:<12} {login.password:<18} {login.role}")
