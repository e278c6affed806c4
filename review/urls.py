"""Pages of the review app."""

from django.urls import URLPattern, URLResolver, path

from review import views
from review.exclusions import views as consensus_views
from review.gold import views as gold_views
from review.quality import views as quality_views
from review.workbench import ahead_views
from review.workbench import views as workbench_views

urlpatterns: list[URLPattern | URLResolver] = [
    path("review/datasets/<int:dataset_id>/", views.dataset_queue, name="queue"),
    path("review/datasets/<int:dataset_id>/settings/", views.settings_update, name="settings"),
    path("review/datasets/<int:dataset_id>/fill/", views.queue_fill, name="fill"),
    path("review/datasets/<int:dataset_id>/next/", views.claim_next, name="next"),
    path(
        "review/datasets/<int:dataset_id>/adjudication/",
        views.adjudication_list,
        name="adjudication_list",
    ),
    path("review/datasets/<int:dataset_id>/progress/", views.progress, name="progress"),
    path("review/datasets/<int:dataset_id>/reviewers/", quality_views.reviewers, name="reviewers"),
    path("review/samples/<int:sample_id>/", workbench_views.workbench, name="workbench"),
    path("review/samples/<int:sample_id>/review/", workbench_views.review_post, name="submit"),
    path("review/mine/", views.my_reviews, name="mine"),
    path("review/datasets/<int:dataset_id>/ahead/", ahead_views.ahead_reserve, name="ahead"),
    path("review/ahead/take/", ahead_views.ahead_take, name="ahead_take"),
    path("review/ahead/release/", ahead_views.ahead_release, name="ahead_release"),
    path("review/samples/<int:sample_id>/gold/", gold_views.gold_mark, name="gold_mark"),
    path("review/samples/<int:sample_id>/gold/remove/", gold_views.gold_unmark, name="gold_unmark"),
    path(
        "review/datasets/<int:dataset_id>/gold/", gold_views.gold_mark_bulk, name="gold_mark_bulk"
    ),
    path(
        "review/datasets/<int:dataset_id>/gold/remove/",
        gold_views.gold_unmark_bulk,
        name="gold_unmark_bulk",
    ),
    path("review/datasets/<int:dataset_id>/gold/items/", gold_views.gold_list, name="gold_list"),
    path("review/samples/<int:sample_id>/adjudicate/", views.adjudicate, name="adjudicate"),
    path(
        "review/datasets/<int:dataset_id>/reviewers/consensus/",
        consensus_views.consensus_quality,
        name="consensus_quality",
    ),
    path(
        "review/datasets/<int:dataset_id>/reviewers/<int:user_id>/exclude/",
        consensus_views.reviewer_exclude,
        name="reviewer_exclude",
    ),
    path(
        "review/datasets/<int:dataset_id>/reviewers/<int:user_id>/include/",
        consensus_views.reviewer_include,
        name="reviewer_include",
    ),
    path(
        "review/datasets/<int:dataset_id>/reviewers/consensus/adjudicate/",
        consensus_views.uncertain_to_adjudication,
        name="uncertain_to_adjudication",
    ),
]
