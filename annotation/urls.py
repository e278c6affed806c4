from django.urls import include, path

from annotation import sample_views, settings_views, views
from annotation.webhooks import views as webhook_views

app_name = "annotation"

urlpatterns = [
    path("webhooks/", webhook_views.webhook_list, name="webhook_list"),
    path("webhooks/<int:endpoint_id>/", webhook_views.webhook_detail, name="webhook_detail"),
    path("webhooks/<int:endpoint_id>/rotate/", webhook_views.webhook_rotate, name="webhook_rotate"),
    path("webhooks/<int:endpoint_id>/test/", webhook_views.webhook_test, name="webhook_test"),
    path("webhooks/<int:endpoint_id>/delete/", webhook_views.webhook_delete, name="webhook_delete"),
    path(
        "webhooks/deliveries/<int:delivery_id>/",
        webhook_views.webhook_delivery,
        name="webhook_delivery",
    ),
    path(
        "webhooks/deliveries/<int:delivery_id>/redeliver/",
        webhook_views.webhook_redeliver,
        name="webhook_redeliver",
    ),
    path(
        "datasets/<int:dataset_id>/webhooks/",
        webhook_views.dataset_webhooks,
        name="dataset_webhooks",
    ),
    path("datasets/", views.dataset_list, name="dataset_list"),
    path("datasets/new/", views.dataset_create, name="dataset_create"),
    path("datasets/<int:dataset_id>/", views.dataset_detail, name="dataset_detail"),
    path(
        "datasets/<int:dataset_id>/auto-send/",
        settings_views.dataset_auto_send,
        name="dataset_auto_send",
    ),
    path(
        "datasets/<int:dataset_id>/instructions/",
        settings_views.dataset_instructions,
        name="dataset_instructions",
    ),
    path(
        "datasets/<int:dataset_id>/members/",
        settings_views.dataset_members,
        name="dataset_members",
    ),
    path(
        "datasets/<int:dataset_id>/members/<int:user_id>/remove/",
        settings_views.dataset_member_remove,
        name="dataset_member_remove",
    ),
    path(
        "datasets/<int:dataset_id>/members/<int:user_id>/roles/",
        settings_views.dataset_member_roles,
        name="dataset_member_roles",
    ),
    path(
        "datasets/<int:dataset_id>/taxonomy/",
        settings_views.dataset_taxonomy,
        name="dataset_taxonomy",
    ),
    path(
        "datasets/<int:dataset_id>/taxonomy/<int:term_id>/",
        settings_views.taxonomy_term_edit,
        name="taxonomy_term_edit",
    ),
    path("datasets/<int:dataset_id>/delete/", settings_views.dataset_delete, name="dataset_delete"),
    path(
        "datasets/<int:dataset_id>/archive/", settings_views.dataset_archive, name="dataset_archive"
    ),
    path("datasets/<int:dataset_id>/samples/", sample_views.sample_list, name="sample_list"),
    path("datasets/<int:dataset_id>/samples/bulk/", sample_views.sample_bulk, name="sample_bulk"),
    path(
        "datasets/<int:dataset_id>/duplicates/",
        sample_views.duplicate_list,
        name="duplicate_list",
    ),
    path(
        "datasets/<int:dataset_id>/duplicates/<int:pair_id>/",
        sample_views.duplicate_pair,
        name="duplicate_pair",
    ),
    path("bulk-actions/<int:job_id>/", sample_views.sample_bulk_job, name="sample_bulk_job"),
    path("samples/<int:sample_id>/", views.sample_detail, name="sample_detail"),
    path("media/<int:asset_id>/", views.media_file, name="media_file"),
    path(
        "media/<int:asset_id>/thumbnail/",
        views.media_file,
        {"variant": "thumbnail"},
        name="media_thumbnail",
    ),
    path(
        "media/<int:asset_id>/display/",
        views.media_file,
        {"variant": "display"},
        name="media_display",
    ),
    path("", include("annotation.imports.urls")),
    path("", include("annotation.snapshots.urls")),
    path("", include("annotation.saved_views.urls")),
]
