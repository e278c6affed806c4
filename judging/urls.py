"""Pages of the judging app."""

from django.urls import include, path

from judging import judge_views, views

urlpatterns = [
    path("judges/", views.judge_list, name="judge_list"),
    path("judges/<int:judge_id>/edit/", judge_views.judge_edit, name="judge_edit"),
    path("judges/<int:judge_id>/enable/", judge_views.judge_enable, name="judge_enable"),
    path("judges/<int:judge_id>/delete/", judge_views.judge_delete, name="judge_delete"),
    path("judges/<int:judge_id>/test/", judge_views.judge_test, name="judge_test"),
    path("datasets/<int:dataset_id>/judging/", views.dataset_judging, name="dataset_judging"),
    path("datasets/<int:dataset_id>/judging/upload/", views.dataset_upload, name="dataset_upload"),
    path(
        "datasets/<int:dataset_id>/judging/upload/confirm/",
        views.dataset_upload_confirm,
        name="dataset_upload_confirm",
    ),
    path("datasets/<int:dataset_id>/leaderboard/", views.leaderboard, name="leaderboard"),
    path("judge-jobs/<int:job_id>/", views.job_detail, name="job_detail"),
    path("judge-jobs/<int:job_id>/cancel/", views.job_cancel, name="job_cancel"),
    path("judge-jobs/<int:job_id>/retry/", views.job_retry, name="job_retry"),
]
urlpatterns += [path("", include("judging.audit.urls"))]  # type: ignore[list-item]
