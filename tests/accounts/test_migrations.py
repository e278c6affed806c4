"""UserPreference's move from mmooc_site to accounts keeps every row (PostgreSQL: the migrations
run inside the test's transaction and roll back with it)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

BEFORE = [("mmooc_site", "0001_initial")]
AFTER = [("accounts", "0001_initial")]


def test_a_preference_saved_before_the_move_is_there_after_it() -> None:
    """A language chosen while the model lived in mmooc_site is read back from accounts."""
    executor = MigrationExecutor(connection)
    executor.migrate([*BEFORE, ("accounts", None)])
    old_apps = executor.loader.project_state(BEFORE).apps
    user = old_apps.get_model("auth", "User").objects.create(username="moved")
    old_apps.get_model("mmooc_site", "UserPreference").objects.create(user=user, language="zh-hans")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from accounts.models import UserPreference

    assert UserPreference.objects.get(user_id=user.pk).language == "zh-hans"
    assert "mmooc_site_userpreference" not in connection.introspection.table_names()
