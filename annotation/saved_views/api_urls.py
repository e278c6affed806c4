"""API routes of the sample list's saved views."""

from django.urls import URLPattern, URLResolver, path

from annotation.saved_views import apis

urlpatterns: list[URLPattern | URLResolver] = [
    path(
        "datasets/<int:dataset_id>/saved-views/",
        apis.SavedViewListCreateApi.as_view(),
        name="api_saved_views",
    ),
    path(
        "datasets/<int:dataset_id>/saved-views/<int:view_id>/",
        apis.SavedViewDetailApi.as_view(),
        name="api_saved_view",
    ),
]
