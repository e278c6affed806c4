from django.urls import include, path

from annotation import apis
from annotation.webhooks import apis as webhook_apis

urlpatterns = [
    path("me/", apis.MeApi.as_view(), name="api_me"),
    path("webhooks/", webhook_apis.EndpointListCreateApi.as_view(), name="api_webhooks"),
    path(
        "webhooks/<int:endpoint_id>/test/",
        webhook_apis.EndpointTestApi.as_view(),
        name="api_webhook_test",
    ),
    path(
        "webhooks/<int:endpoint_id>/deliveries/",
        webhook_apis.EndpointDeliveriesApi.as_view(),
        name="api_webhook_deliveries",
    ),
    path(
        "webhook-deliveries/<int:delivery_id>/",
        webhook_apis.DeliveryApi.as_view(),
        name="api_webhook_delivery",
    ),
    path(
        "webhook-deliveries/<int:delivery_id>/redeliver/",
        webhook_apis.DeliveryRedeliverApi.as_view(),
        name="api_webhook_redeliver",
    ),
    path("datasets/", apis.DatasetListCreateApi.as_view(), name="api_datasets"),
    path("datasets/<int:dataset_id>/", apis.DatasetDetailApi.as_view(), name="api_dataset"),
    path(
        "datasets/<int:dataset_id>/samples/",
        apis.DatasetSampleListApi.as_view(),
        name="api_dataset_samples",
    ),
    path(
        "datasets/<int:dataset_id>/samples/bulk/",
        apis.SampleBulkApi.as_view(),
        name="api_dataset_samples_bulk",
    ),
    path(
        "bulk-actions/<int:job_id>/",
        apis.SampleBulkJobApi.as_view(),
        name="api_sample_bulk_job",
    ),
    path(
        "datasets/<int:dataset_id>/send-to-review/",
        apis.SendToReviewApi.as_view(),
        name="api_dataset_send_to_review",
    ),
    path(
        "datasets/<int:dataset_id>/members/",
        apis.DatasetMemberApi.as_view(),
        name="api_dataset_members",
    ),
    path("samples/<int:sample_id>/", apis.SampleDetailApi.as_view(), name="api_sample"),
    path("", include("annotation.imports.api_urls")),
    path("", include("annotation.snapshots.api_urls")),
    path("", include("annotation.saved_views.api_urls")),
]
