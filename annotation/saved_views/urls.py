"""The sample list's layout and saved-view forms."""

from django.urls import URLPattern, URLResolver, path

from annotation.saved_views import views

urlpatterns: list[URLPattern | URLResolver] = [
    path(
        "datasets/<int:dataset_id>/samples/layout/",
        views.sample_list_layout,
        name="sample_list_layout",
    ),
    path(
        "datasets/<int:dataset_id>/samples/views/",
        views.saved_view_create,
        name="saved_view_create",
    ),
    path(
        "datasets/<int:dataset_id>/samples/views/<int:view_id>/",
        views.saved_view_update,
        name="saved_view_update",
    ),
    path(
        "datasets/<int:dataset_id>/samples/views/<int:view_id>/delete/",
        views.saved_view_delete,
        name="saved_view_delete",
    ),
]
