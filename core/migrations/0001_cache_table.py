"""The database cache's table, made by ``migrate`` itself.

Without Redis the site caches in the database (settings.CACHES); a deployment that ran
``migrate`` but not ``createcachetable`` used to answer 503 on /healthz/ and fail every throttled
request. ``createcachetable`` makes only the tables that are missing, and nothing when the cache
is not a database cache.
"""

from django.core.management import call_command
from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def make_cache_table(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies: list[tuple[str, str]] = []

    operations = [migrations.RunPython(make_cache_table, migrations.RunPython.noop)]
