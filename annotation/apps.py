from django.apps import AppConfig
from django.utils.translation import gettext

from annotation.formats import records


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"

    def ready(self) -> None:
        # The Django-free parsers' messages (row errors, media and archive checks) are shown
        # to users: have them translated into the active language.
        records.set_translator(gettext)
