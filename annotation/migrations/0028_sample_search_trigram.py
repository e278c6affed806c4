"""The sample list's search on an index: the extension pg_trgm, and one trigram GIN index over
the four columns the search reads (``annotation.sample_filters.SEARCH_COLUMNS``), each as
Django's ``icontains`` writes it: ``UPPER(col::text) LIKE UPPER('%text%')``. A multicolumn GIN
index serves a condition on any of its columns, so the search's OR of four conditions is a
BitmapOr of four scans of this one index.

Written as SQL: Django writes an index of operator classes on expressions only with
``django.contrib.postgres`` installed as an app, which the site does not install.

``CREATE EXTENSION pg_trgm`` needs a role that may create extensions in the database (pg_trgm
is a trusted extension: CREATE on the database is enough since PostgreSQL 13), or the
extension installed beforehand by someone who may (README, "Production").
"""

from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations

CREATE = """
CREATE INDEX sample_search_trgm_idx ON annotation_sample USING gin (
    UPPER(external_id::text) gin_trgm_ops,
    UPPER(question) gin_trgm_ops,
    UPPER(reference_answer) gin_trgm_ops,
    UPPER(speech_utterance) gin_trgm_ops
)
"""
DROP = "DROP INDEX IF EXISTS sample_search_trgm_idx"


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0027_sample_list_sort_indexes"),
    ]

    operations = [
        TrigramExtension(),
        migrations.RunSQL(CREATE, DROP),
    ]
