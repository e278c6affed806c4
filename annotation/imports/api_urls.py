"""API routes of imports: start one, watch its progress, list the rows it rejected."""

from django.urls import URLPattern, URLResolver, path

from annotation.imports import apis as import_apis

urlpatterns: list[URLPattern | URLResolver] = [
    path(
        "datasets/<int:dataset_id>/imports/",
        import_apis.DatasetImportListCreateApi.as_view(),
        name="api_dataset_imports",
    ),
    path("imports/<int:job_id>/", import_apis.ImportJobDetailApi.as_view(), name="api_import_job"),
    path(
        "imports/<int:job_id>/cancel/",
        import_apis.ImportJobCancelApi.as_view(),
        name="api_import_job_cancel",
    ),
    path(
        "imports/<int:job_id>/retry/",
        import_apis.ImportJobRetryApi.as_view(),
        name="api_import_job_retry",
    ),
    path(
        "imports/<int:job_id>/errors/",
        import_apis.ImportJobErrorListApi.as_view(),
        name="api_import_job_errors",
    ),
]
