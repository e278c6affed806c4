"""UserPreference moves to the accounts app: the table is renamed, its rows are kept."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("mmooc_site", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.AlterModelTable(name="userpreference", table="accounts_userpreference"),
            ],
            state_operations=[migrations.DeleteModel(name="UserPreference")],
        )
    ]
