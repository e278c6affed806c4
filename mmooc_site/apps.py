"""The site shell as an app: its start-up makes the local folders the settings point at."""

from __future__ import annotations

from pathlib import Path

from django.apps import AppConfig
from django.conf import settings


class SiteConfig(AppConfig):
    name = "mmooc_site"
    verbose_name = "Site"

    def ready(self) -> None:
        local_folders_make()


def local_folders_make() -> None:
    """Make the folder of a local SQLite database (the settings themselves make no folders;
    the filesystem broker makes its own, see ``mmooc_site.fsbroker``)."""
    database = settings.DATABASES["default"]
    name = str(database.get("NAME") or "")
    if database["ENGINE"].endswith("sqlite3") and name and not name.startswith(("file:", ":")):
        Path(name).parent.mkdir(parents=True, exist_ok=True)
