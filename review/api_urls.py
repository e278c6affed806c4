"""API routes of the review app."""

from django.urls import URLPattern, URLResolver, path

from review import apis
from review.exclusions import apis as consensus_apis
from review.gold import apis as gold_apis
from review.quality import apis as quality_apis

urlpatterns: list[URLPattern | URLResolver] = [
    path("datasets/<int:dataset_id>/claim/", apis.ClaimApi.as_view(), name="api_review_claim"),
    path(
        "datasets/<int:dataset_id>/review-settings/",
        apis.ReviewSettingsApi.as_view(),
        name="api_review_settings",
    ),
    path(
        "datasets/<int:dataset_id>/review-queue/",
        apis.QueueSyncApi.as_view(),
        name="api_review_queue",
    ),
    path(
        "datasets/<int:dataset_id>/gold/",
        gold_apis.DatasetGoldApi.as_view(),
        name="api_review_dataset_gold",
    ),
    path(
        "datasets/<int:dataset_id>/gold/unmark/",
        gold_apis.DatasetGoldUnmarkApi.as_view(),
        name="api_review_dataset_gold_unmark",
    ),
    path(
        "samples/<int:sample_id>/gold/", gold_apis.SampleGoldApi.as_view(), name="api_review_gold"
    ),
    path(
        "datasets/<int:dataset_id>/reviewers/",
        quality_apis.ReviewerQualityApi.as_view(),
        name="api_review_reviewers",
    ),
    path(
        "datasets/<int:dataset_id>/reviewers/computation/",
        quality_apis.ReviewerQualityComputationApi.as_view(),
        name="api_review_reviewers_computation",
    ),
    path(
        "datasets/<int:dataset_id>/reviewer-exclusions/",
        consensus_apis.ReviewerExclusionsApi.as_view(),
        name="api_reviewer_exclusions",
    ),
    path("reviews/", apis.ReviewCreateApi.as_view(), name="api_reviews"),
    path("reviews/<int:review_id>/", apis.ReviewAmendApi.as_view(), name="api_review_amend"),
    path("samples/<int:sample_id>/draft/", apis.DraftApi.as_view(), name="api_review_draft"),
    path("samples/<int:sample_id>/skip/", apis.SkipApi.as_view(), name="api_review_skip"),
    path(
        "samples/<int:sample_id>/comments/",
        apis.CommentApi.as_view(),
        name="api_review_comments",
    ),
    path(
        "samples/<int:sample_id>/adjudication/",
        apis.AdjudicationApi.as_view(),
        name="api_review_adjudication",
    ),
]
