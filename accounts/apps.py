from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Per-user settings of the site (the interface language)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"
