"""Configure a judge: ``add_judge NAME --base-url URL --model MODEL --api-key-env VAR …``."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from judging import services
from judging.models import Judge, JudgeKind


class Command(BaseCommand):
    help = (
        "Add a judge (an OpenAI-compatible endpoint; the key stays in the named environment "
        "variable), or change the settings given for an existing one."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--kind", choices=JudgeKind.values, default=JudgeKind.OPENAI)
        parser.add_argument("--base-url", default=None)
        parser.add_argument("--model", default=None)
        parser.add_argument("--api-key-env", default=None, help="name of the variable, not a key")
        parser.add_argument("--max-concurrency", type=int, default=None)
        parser.add_argument("--rpm", type=int, default=None, help="requests per minute")
        parser.add_argument("--temperature", type=float, default=None)
        parser.add_argument("--timeout", type=float, default=None, help="seconds per call")
        parser.add_argument("--max-tokens", type=int, default=None)
        parser.add_argument("--text-only", action="store_true", default=None)
        parser.add_argument("--family", default=None)
        parser.add_argument("--prompt-version", default=None)
        parser.add_argument("--max-attempts", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        names = {
            "kind": "kind",
            "base_url": "base_url",
            "model": "model",
            "api_key_env": "api_key_env",
            "max_concurrency": "max_concurrency",
            "rpm": "requests_per_minute",
            "temperature": "temperature",
            "timeout": "timeout_s",
            "max_tokens": "max_tokens",
            "text_only": "text_only",
            "family": "family",
            "prompt_version": "prompt_version",
            "max_attempts": "max_attempts",
        }
        fields = {field: options[arg] for arg, field in names.items() if options[arg] is not None}
        existing = Judge.objects.filter(name=options["name"]).first()
        try:
            if existing is None:
                judge = services.judge_create(name=options["name"], **fields)
                verb = "Added"
            else:
                judge = services.judge_update(judge=existing, changes=fields)
                verb = "Updated"
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(
            f"{verb} judge {judge.name} ({judge.get_kind_display()}, model {judge.model or '-'}, "
            f"concurrency {judge.max_concurrency}, rpm {judge.requests_per_minute or '-'})"
        )
