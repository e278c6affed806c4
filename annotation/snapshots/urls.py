"""Pages of release snapshots."""

from django.urls import URLPattern, URLResolver, path

from annotation.snapshots import views as snapshot_views

urlpatterns: list[URLPattern | URLResolver] = [
    path(
        "datasets/<int:dataset_id>/snapshots/",
        snapshot_views.snapshot_list,
        name="snapshot_list",
    ),
    path("snapshots/<int:snapshot_id>/", snapshot_views.snapshot_detail, name="snapshot_detail"),
    path(
        "snapshots/<int:snapshot_id>/retry/",
        snapshot_views.snapshot_retry,
        name="snapshot_retry",
    ),
    path(
        "snapshots/<int:snapshot_id>/download/",
        snapshot_views.snapshot_download,
        name="snapshot_download",
    ),
    path("snapshots/file/<str:token>/", snapshot_views.snapshot_file, name="snapshot_file"),
]
