"""The built-in offline rule judge, present on every installation."""

from django.db import migrations


def create_rule_judge(apps, schema_editor):
    Judge = apps.get_model("judging", "Judge")
    Judge.objects.get_or_create(
        name="rule",
        defaults={"kind": "rule", "family": "rule", "prompt_version": "rule", "max_concurrency": 1},
    )


def remove_rule_judge(apps, schema_editor):
    apps.get_model("judging", "Judge").objects.filter(name="rule", kind="rule").delete()


class Migration(migrations.Migration):
    dependencies = [("judging", "0001_initial")]

    operations = [migrations.RunPython(create_rule_judge, remove_rule_judge)]
