"""core as an app: its migrations (the database cache's table) and the site-level commands
(``compile_translations``, ``makemessages``); it holds no models."""

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"
