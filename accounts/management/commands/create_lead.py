"""``manage.py create_lead USERNAME --email ADDRESS``: the first lead of a fresh site (or any
lead, from a shell); everything after it is done in the browser."""

from __future__ import annotations

import getpass
import sys
from typing import Any

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email
from django.db import transaction

from accounts import access_log, people
from accounts.models import AccessEventKind
from core.roles import LEAD


class Command(BaseCommand):
    help = "Create a project lead (asks for the password, or reads it from --password-stdin)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--email", required=True, help="their e-mail address")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password from the first line of standard input",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username = str(options["username"]).strip()
        email = str(options["email"]).strip()
        user_model = get_user_model()
        try:
            user_model.username_validator(username)
            validate_email(email)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        if user_model.objects.filter(username__iexact=username).exists():
            raise CommandError(f"A user named {username!r} exists already.")
        if user_model.objects.filter(email__iexact=email).exists():
            raise CommandError(f"An account with the address {email!r} exists already.")
        password = self._password(options["password_stdin"])
        user = user_model(username=username, email=email)
        try:
            password_validation.validate_password(password, user)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        with transaction.atomic():
            user.set_password(password)
            user.save()
            people.person_grant_roles(person=user, roles={LEAD}, actor=None, source="command")
            access_log.access_event_record(kind=AccessEventKind.LEAD_CREATED, subject=user)
        self.stdout.write(f"Created the lead {username}; sign in at /login/.")

    def _password(self, from_stdin: bool) -> str:
        if from_stdin:
            return sys.stdin.readline().rstrip("\n")
        first = getpass.getpass("Password: ")
        if first != getpass.getpass("Password (again): "):
            raise CommandError("The two passwords differ.")
        return first
