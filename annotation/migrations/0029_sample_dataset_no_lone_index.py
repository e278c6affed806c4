"""The sample's dataset loses its index of its own: every other index of the table but the
pair's leads with the dataset, so it served no query alone, and each import paid for it on
every row. Only the index is dropped: Django's own operation would drop and re-add the
foreign key too, checking every sample again."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0028_sample_search_trigram"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "annotation_sample_dataset_id_68166613"',
                    'CREATE INDEX IF NOT EXISTS "annotation_sample_dataset_id_68166613" '
                    'ON "annotation_sample" ("dataset_id")',
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="sample",
                    name="dataset",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="samples",
                        to="annotation.dataset",
                    ),
                ),
            ],
        ),
    ]
