"""Migration 0014 gives each existing membership the roles its user held site-wide
(PostgreSQL: the migrations run inside the test's transaction and roll back with it)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

BEFORE = [("annotation", "0013_import_status_finished_with_errors")]
AFTER = [("annotation", "0014_membership_roles")]


def test_members_keep_the_roles_they_worked_in() -> None:
    """An annotator annotates, an auditor audits, one holding both does both, one holding
    neither (a lead) does neither, in every dataset they were a member of."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    user_model, group_model = old.get_model("auth", "User"), old.get_model("auth", "Group")
    groups = {
        name: group_model.objects.get_or_create(name=name)[0]
        for name in ("annotator", "auditor", "lead")
    }
    dataset = old.get_model("annotation", "Dataset").objects.create(
        name="old", kind="image_question"
    )
    held = {
        "ann": ["annotator"],
        "aud": ["auditor"],
        "both": ["annotator", "auditor"],
        "boss": ["lead"],
    }
    for username, names in held.items():
        user = user_model.objects.create(username=username)
        user.groups.add(*(groups[n] for n in names))
        old.get_model("annotation", "DatasetMembership").objects.create(dataset=dataset, user=user)

    with connection.cursor() as cursor:  # the rows' deferred key checks before ALTER TABLE
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    rows = new.get_model("annotation", "DatasetMembership").objects.values_list(
        "user__username", "annotates", "audits"
    )
    assert sorted(rows) == [
        ("ann", True, False),
        ("aud", False, True),
        ("boss", False, False),
        ("both", True, True),
    ]
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
