from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class JudgingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "judging"

    def ready(self) -> None:
        from annotation import extensions
        from judging import views
        from judging.audit import work

        extensions.dataset_list_column_register(
            extensions.DatasetListColumn(
                heading=_("My audit work"),
                template="judging/_dataset_audits.html",
                load=work.dataset_list_audits,
            )
        )

        # A lead reads each model's response and the judges' verdicts on the sample page and
        # beside the reviews when adjudicating.
        extensions.sample_panel_register(
            extensions.SamplePanel(
                template="judging/_sample_judging.html",
                load=views.sample_judging_panel,
                in_adjudication=True,
            )
        )

        from judging import selectors

        # The sample list filters on the models' responses and the judges' verdicts.
        extensions.sample_condition_register(extensions.MODEL_RESPONSE, selectors.response_exists)
        extensions.sample_condition_register(
            extensions.VERDICT_LABEL, selectors.verdict_label_exists
        )
        extensions.sample_condition_register(
            extensions.VERDICT_SCORE, selectors.verdict_score_exists
        )

        from annotation.imports.kinds import ImportKindSpec, import_kind_register
        from annotation.models import ImportKind

        # Response and verdict uploads run on annotation's import jobs, by this app's task.
        spec = ImportKindSpec("judging.run_import_job", "judging:dataset_judging")
        import_kind_register(ImportKind.RESPONSES, spec)
        import_kind_register(ImportKind.VERDICTS, spec)

        from judging.services import imported

        # A Label Studio export's predictions become a judge's verdicts.
        extensions.imported_work_register(predictions=imported.verdicts_from_imported)
