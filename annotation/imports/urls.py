"""Pages of imports: the upload form, a job's progress and its error report."""

from django.urls import URLPattern, URLResolver, path

from annotation.imports import labelstudio_views
from annotation.imports import views as import_views

urlpatterns: list[URLPattern | URLResolver] = [
    path("datasets/<int:dataset_id>/import/", import_views.dataset_import, name="dataset_import"),
    path(
        "datasets/<int:dataset_id>/import/labelstudio/",
        labelstudio_views.labelstudio_import,
        name="labelstudio_import",
    ),
    path(
        "datasets/<int:dataset_id>/import/labelstudio/confirm/",
        labelstudio_views.labelstudio_import_confirm,
        name="labelstudio_import_confirm",
    ),
    path("imports/<int:job_id>/", import_views.import_job, name="import_job"),
    path("imports/<int:job_id>/cancel/", import_views.import_job_cancel, name="import_job_cancel"),
    path("imports/<int:job_id>/retry/", import_views.import_job_retry, name="import_job_retry"),
    path(
        "imports/<int:job_id>/errors.csv",
        import_views.import_job_errors_csv,
        name="import_job_errors_csv",
    ),
]
