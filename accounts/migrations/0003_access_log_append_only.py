"""The access log is append-only in the database too: on PostgreSQL (production, the tests)
a trigger refuses every UPDATE and DELETE of its rows. TRUNCATE, which only a database
owner's maintenance (or the test suite's flush) runs, is left alone. SQLite, the embedded
demo's database, has no such guard: its flush empties tables row by row."""

from django.db import migrations

TABLE = "accounts_accessevent"

POSTGRES_UP = f"""
CREATE FUNCTION accounts_access_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING
        MESSAGE = 'the access log is append-only: ' || TG_OP || ' of its rows is refused',
        ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER accounts_access_log_append_only
    BEFORE UPDATE OR DELETE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION accounts_access_log_append_only();
"""
POSTGRES_DOWN = f"""
DROP TRIGGER IF EXISTS accounts_access_log_append_only ON {TABLE};
DROP FUNCTION IF EXISTS accounts_access_log_append_only();
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_UP)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_DOWN)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_invitations_access_log")]

    operations = [migrations.RunPython(forwards, backwards)]
