"""The three role groups and their permissions."""

from django.db import migrations

LEAD_MODELS = [
    "dataset",
    "datasetmembership",
    "taxonomyterm",
    "sample",
    "samplemedia",
    "samplerevision",
    "mediaasset",
]
LEAD_EXTRA = ["import_samples", "configure_dataset", "export_dataset"]


def create_roles(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    lead, _ = Group.objects.get_or_create(name="lead")
    Group.objects.get_or_create(name="annotator")
    Group.objects.get_or_create(name="auditor")
    codenames = [
        f"{action}_{model}" for model in LEAD_MODELS for action in ("add", "change", "view")
    ] + LEAD_EXTRA
    lead.permissions.add(
        *Permission.objects.filter(content_type__app_label="annotation", codename__in=codenames)
    )


def drop_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(
        name__in=["lead", "annotator", "auditor"]
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_roles, drop_roles)]
