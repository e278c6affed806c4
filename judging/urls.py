"""Pages of the judging app."""

from django.urls import include, path

from judging import views

urlpatterns = [
    path("judges/", views.judge_list, name="judge_list"),
    path("datasets/<int:dataset_id>/judging/", views.dataset_judging, name="dataset_judging"),
    path("datasets/<int:dataset_id>/judging/upload/", views.dataset_upload, name="dataset_upload"),
    path("datasets/<int:dataset_id>/leaderboard/", views.leaderboard, name="leaderboard"),
    path("judge-jobs/<int:job_id>/", views.job_detail, name="job_detail"),
    path("judge-jobs/<int:job_id>/cancel/", views.job_cancel, name="job_cancel"),
    path("judge-jobs/<int:job_id>/retry/", views.job_retry, name="job_retry"),
]
urlpatterns += [path("", include("judging.audit.urls"))]  # type: ignore[list-item]
