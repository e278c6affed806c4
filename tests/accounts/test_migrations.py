"""accounts' first migration makes the preferences' table, or takes over with its rows the
table of a site whose preferences lived in the former mmooc_site app."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import connection

from accounts.models import UserPreference
from tests.annotation.factories import UserFactory

pytestmark = pytest.mark.django_db

initial = importlib.import_module("accounts.migrations.0001_initial")


def test_the_table_of_the_former_site_app_is_taken_over_with_its_rows() -> None:
    """A language chosen while the model lived in mmooc_site is read back from accounts."""
    user = UserFactory.create()
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE accounts_userpreference RENAME TO mmooc_site_userpreference")
        cursor.execute(
            "INSERT INTO mmooc_site_userpreference (language, user_id) VALUES ('zh-hans', %s)",
            [user.pk],
        )
    with connection.schema_editor() as editor:
        initial.create_or_take_over(apps, editor)
    assert UserPreference.objects.get(user_id=user.pk).language == "zh-hans"
    assert "mmooc_site_userpreference" not in connection.introspection.table_names()


def test_a_table_already_there_is_left_alone() -> None:
    """Run again (a migrated site), the migration changes nothing."""
    user = UserFactory.create()
    UserPreference.objects.create(user=user, language="en")
    with connection.schema_editor() as editor:
        initial.create_or_take_over(apps, editor)
    assert UserPreference.objects.get(user_id=user.pk).language == "en"
