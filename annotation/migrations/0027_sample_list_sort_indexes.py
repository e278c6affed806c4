"""An index per sort of the sample list, tie-broken by id (keyset pages: core/keyset.py); they
replace the (dataset, status), (dataset, category) and (dataset, last change) indexes, which
are their prefixes."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0026_sample_list_filter_indexes"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="sample",
            index=models.Index(fields=["dataset", "id"], name="sample_dataset_id_idx"),
        ),
        migrations.AddIndex(
            model_name="sample",
            index=models.Index(
                fields=["dataset", "status", "id"], name="sample_dataset_status_id_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="sample",
            index=models.Index(
                fields=["dataset", "category_code", "id"], name="sample_dataset_category_id_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="sample",
            index=models.Index(
                fields=["dataset", "priority", "id"], name="sample_dataset_priority_id_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="sample",
            index=models.Index(
                fields=["dataset", "updated_at", "id"], name="sample_dataset_updated_id_idx"
            ),
        ),
        migrations.RemoveIndex(model_name="sample", name="sample_dataset_status_idx"),
        migrations.RemoveIndex(model_name="sample", name="sample_dataset_category_idx"),
        migrations.RemoveIndex(model_name="sample", name="sample_dataset_updated_idx"),
    ]
