"""The access log (accounts/access_log.py and its page): filtered reading for leads, and no
line ever changed or deleted, by the application or by SQL."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.urls import reverse
from django.utils import translation

from accounts import access_log, people
from accounts.models import AccessEvent, AccessEventKind
from core.roles import ANNOTATOR, AUDITOR
from tests.annotation.factories import UserFactory, mmooc_dataset

pytestmark = pytest.mark.django_db


def _browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.postgres
def test_the_database_refuses_to_change_or_delete_a_line() -> None:
    """UPDATE and DELETE of the log's rows fail in PostgreSQL itself (a trigger), whether
    they come from the ORM or from plain SQL."""
    event = access_log.access_event_record(kind=AccessEventKind.SIGN_IN_FAILED, subject_name="x")
    attempts: list[Callable[[], object]] = [
        lambda: AccessEvent.objects.filter(pk=event.pk).update(subject_name="y"),
        lambda: AccessEvent.objects.filter(pk=event.pk).delete(),
        lambda: connection.cursor().execute(
            "UPDATE accounts_accessevent SET kind = 'signed_in' WHERE id = %s", [event.pk]
        ),
        lambda: connection.cursor().execute(
            "DELETE FROM accounts_accessevent WHERE id = %s", [event.pk]
        ),
    ]
    for attempt in attempts:
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            attempt()
    event.refresh_from_db()
    assert event.subject_name == "x" and event.kind == AccessEventKind.SIGN_IN_FAILED


def test_deleting_a_dataset_or_a_user_leaves_their_lines(lead: Any) -> None:
    """The log keeps names and ids without foreign keys: a dataset deleted (allowed while it
    has no reviews) keeps its membership lines, with its name."""
    dataset = mmooc_dataset(name="short-lived")
    person = UserFactory.create(role=ANNOTATOR)
    people.person_add_to_dataset(person=person, dataset=dataset, roles={ANNOTATOR}, actor=lead)
    from annotation import services

    services.dataset_delete(dataset=dataset)
    line = AccessEvent.objects.get(kind=AccessEventKind.MEMBER_ADDED)
    assert line.dataset_name == "short-lived" and line.subject_name == person.username
    assert line.actor_name == lead.username


def test_the_page_filters_by_what_who_and_when(
    lead: Any, django_assert_max_num_queries: Any
) -> None:
    """Kind, a part of a name (the person or whoever acted) and dates narrow the lines;
    the page costs a fixed number of queries."""
    ann = UserFactory.create(username="ann", role=ANNOTATOR)
    bob = UserFactory.create(username="bob", role=AUDITOR)
    for person in (ann, bob):
        people.person_deactivate(person=person, actor=lead)
    Client().post(reverse("login"), {"username": "ann", "password": "wrong"})
    url = reverse("accounts:access_log")
    browser = _browser(lead)
    with django_assert_max_num_queries(8):
        page = browser.get(url).content.decode()
    assert page.count('data-kind="deactivated"') == 2
    only_ann = browser.get(url, {"person": "an"}).content.decode()
    assert 'data-kind="sign_in_failed"' in only_ann and ">bob<" not in only_ann
    deactivations = browser.get(url, {"kind": "deactivated", "person": "bob"}).content.decode()
    assert deactivations.count('data-kind="deactivated"') == 1
    by_lead = browser.get(url, {"person": lead.username}).content.decode()
    assert by_lead.count('data-kind="deactivated"') == 2
    tomorrow = (dt.date.today() + dt.timedelta(days=2)).isoformat()
    assert "Nothing matches." in browser.get(url, {"since": tomorrow}).content.decode()
    bad = browser.get(url, {"since": "not-a-date"})
    assert bad.status_code == 400 and "valid date" in bad.content.decode()


def test_a_line_reads_in_the_readers_language(lead: Any) -> None:
    person = UserFactory.create(role=ANNOTATOR)
    people.person_set_role(person=person, role=AUDITOR, actor=lead)
    event = AccessEvent.objects.get(kind=AccessEventKind.ROLE_CHANGED)
    assert access_log.describe(event) == "before: annotator; after: auditor"
    with translation.override("zh-hans"):
        text = access_log.describe(event)
    assert "annotator" not in text and "before" not in text


def test_the_first_lead_comes_from_the_command(capsys: Any) -> None:
    """create_lead makes a lead who signs in, refuses a taken name or a weak password, and
    writes the creation to the log."""
    import io
    import sys

    from django.core.management.base import CommandError

    stdin = sys.stdin
    try:
        sys.stdin = io.StringIO("a-long-lead-pass-9\n")
        call_command("create_lead", "first", "--email", "first@example.org", "--password-stdin")
        sys.stdin = io.StringIO("a-long-lead-pass-9\n")
        with pytest.raises(CommandError, match="exists already"):
            call_command("create_lead", "first", "--email", "x@example.org", "--password-stdin")
        sys.stdin = io.StringIO("123\n")
        with pytest.raises(CommandError, match="too short"):
            call_command("create_lead", "second", "--email", "s@example.org", "--password-stdin")
    finally:
        sys.stdin = stdin
    signed = Client().post(
        reverse("login"), {"username": "first", "password": "a-long-lead-pass-9"}
    )
    assert signed["Location"] == reverse("annotation:dataset_list")
    assert AccessEvent.objects.filter(kind=AccessEventKind.LEAD_CREATED).count() == 1
