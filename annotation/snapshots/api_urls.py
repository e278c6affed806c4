"""API routes of release snapshots."""

from django.urls import URLPattern, URLResolver, path

from annotation.snapshots import apis as snapshot_apis

urlpatterns: list[URLPattern | URLResolver] = [
    path(
        "datasets/<int:dataset_id>/snapshots/",
        snapshot_apis.DatasetSnapshotListCreateApi.as_view(),
        name="api_dataset_snapshots",
    ),
    path(
        "snapshots/<int:snapshot_id>/",
        snapshot_apis.SnapshotDetailApi.as_view(),
        name="api_snapshot",
    ),
    path(
        "snapshots/<int:snapshot_id>/retry/",
        snapshot_apis.SnapshotRetryApi.as_view(),
        name="api_snapshot_retry",
    ),
    path(
        "snapshots/<int:snapshot_id>/diff/",
        snapshot_apis.SnapshotDiffApi.as_view(),
        name="api_snapshot_diff",
    ),
    path(
        "snapshots/<int:snapshot_id>/download/",
        snapshot_apis.SnapshotDownloadApi.as_view(),
        name="api_snapshot_download",
    ),
]
