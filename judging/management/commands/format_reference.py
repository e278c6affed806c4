"""Write docs/formats.md from the readers' and writers' field lists (``--check``: only say
whether it is up to date, exit 1 when not)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from judging.formats import reference as formats_reference


class Command(BaseCommand):
    help = "Write the format reference (docs/formats.md) from the code's field lists."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--check", action="store_true", help="fail when it is not current")

    def handle(self, *args: Any, **options: Any) -> None:
        text = formats_reference.render_markdown()
        path = formats_reference.REFERENCE
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if options["check"]:
            if current != text:
                raise CommandError(f"{path} is out of date: run manage.py format_reference")
            self.stdout.write(f"{path} is up to date.")
            return
        path.write_text(text, encoding="utf-8")
        self.stdout.write(f"Wrote {path}.")
