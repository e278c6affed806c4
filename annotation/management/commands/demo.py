"""python manage.py demo: demo users (one per role) and a small dataset of each kind."""

from typing import Any

from django.core.management.base import BaseCommand

from annotation.demo import demo_load


class Command(BaseCommand):
    help = "Create demo users (one per role) and a small demo dataset of each kind."

    def handle(self, *args: Any, **options: Any) -> None:
        logins = demo_load()
        self.stdout.write("Demo logins (username / password / role):")
        for login in logins:
            self.stdout.write(f"  {login.username:<12} {login.password:<18} {login.role}")
