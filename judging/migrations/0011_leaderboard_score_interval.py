from django.db import migrations, models

# The cells kept so far have no sum of squares: they stay NULL (the page and the API say
# "no interval until the next recomputation", never a wrong one) and every dataset with
# cells is marked as changed, so that the periodic sweep (or the next page view, once the
# refresh interval has passed) recomputes it and fills them.
MARK = """
INSERT INTO judging_leaderboardchange (dataset_id, xact, since)
SELECT DISTINCT dataset_id, pg_current_xact_id()::text::bigint, now()
FROM judging_leaderboardcell
ON CONFLICT (dataset_id, xact) DO NOTHING;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0010_sample_list_filter_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="leaderboardcell",
            name="score_squares",
            field=models.FloatField(null=True, verbose_name="sum of squared scores"),
        ),
        migrations.AddField(
            model_name="leaderboardcell",
            name="score_binary_n",
            field=models.PositiveIntegerField(null=True, verbose_name="responses scoring 0 or 1"),
        ),
        migrations.RunSQL(MARK, migrations.RunSQL.noop),
    ]
