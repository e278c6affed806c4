from django.urls import include, path

from annotation import views

app_name = "annotation"

urlpatterns = [
    path("datasets/", views.dataset_list, name="dataset_list"),
    path("datasets/new/", views.dataset_create, name="dataset_create"),
    path("datasets/<int:dataset_id>/", views.dataset_detail, name="dataset_detail"),
    path("samples/<int:sample_id>/", views.sample_detail, name="sample_detail"),
    path("media/<int:asset_id>/", views.media_file, name="media_file"),
    path(
        "media/<int:asset_id>/thumbnail/",
        views.media_file,
        {"variant": "thumbnail"},
        name="media_thumbnail",
    ),
    path("", include("annotation.imports.urls")),
    path("", include("annotation.snapshots.urls")),
]
