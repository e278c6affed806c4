"""UserPreference, taken over from mmooc_site with its table (renamed there) and its rows."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def move_content_type(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label="accounts", model="userpreference").exists():
        content_type.objects.filter(app_label="mmooc_site", model="userpreference").update(
            app_label="accounts"
        )


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("mmooc_site", "0002_userpreference_to_accounts"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="UserPreference",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("language", models.CharField(blank=True, choices=[("en", "English"), ("zh-hans", "Simplified Chinese")], default="", max_length=10, verbose_name="language")),
                        ("user", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="preference", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "verbose_name": "user preference",
                        "verbose_name_plural": "user preferences",
                    },
                ),
            ],
        ),
        migrations.RunPython(move_content_type, migrations.RunPython.noop),
    ]
