from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class JudgingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "judging"

    def ready(self) -> None:
        from annotation import extensions
        from judging.audit import work

        extensions.dataset_list_column_register(
            extensions.DatasetListColumn(
                heading=_("My audit work"),
                template="judging/_dataset_audits.html",
                load=work.dataset_list_audits,
            )
        )
