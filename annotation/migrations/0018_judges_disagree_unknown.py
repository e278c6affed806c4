"""``Sample.judges_disagree`` becomes null while no judge has voted on the sample.

Until now "no vote" and "every judge agrees" were both false, so the sample list's "Judges:
agree" filter matched samples no judge had judged. A sample with no judge-votes note (never
judged) becomes null; a judged one keeps its value.
"""

from django.db import migrations, models

FORWARD = """
UPDATE annotation_sample s SET judges_disagree = NULL
WHERE NOT s.judges_disagree
  AND NOT EXISTS (
      SELECT 1 FROM annotation_samplenote n
      WHERE n.sample_id = s.id AND n.key = 'judge_votes'
  )
"""
BACKWARD = "UPDATE annotation_sample SET judges_disagree = false WHERE judges_disagree IS NULL"


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0017_sql_functions_plpgsql"),
    ]

    operations = [
        migrations.AlterField(
            model_name="sample",
            name="judges_disagree",
            field=models.BooleanField(default=None, null=True, verbose_name="judges disagree"),
        ),
        migrations.RunSQL(FORWARD, BACKWARD),
    ]
