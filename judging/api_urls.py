"""API routes of the judging app."""

from django.urls import include, path

from judging import apis, judge_apis

urlpatterns = [
    path("judges/", apis.JudgeListCreateApi.as_view(), name="api_judges"),
    path("judges/<int:judge_id>/", apis.JudgeDetailApi.as_view(), name="api_judge"),
    path("judges/<int:judge_id>/test/", judge_apis.JudgeTestApi.as_view(), name="api_judge_test"),
    path(
        "judge-checks/<int:check_id>/", judge_apis.JudgeCheckApi.as_view(), name="api_judge_check"
    ),
    path(
        "datasets/<int:dataset_id>/judge-jobs/",
        apis.DatasetJobListCreateApi.as_view(),
        name="api_judge_jobs",
    ),
    path("judge-jobs/<int:job_id>/", apis.JobProgressApi.as_view(), name="api_judge_job"),
    path(
        "judge-jobs/<int:job_id>/cancel/", apis.JobCancelApi.as_view(), name="api_judge_job_cancel"
    ),
    path("judge-jobs/<int:job_id>/retry/", apis.JobRetryApi.as_view(), name="api_judge_job_retry"),
    path(
        "datasets/<int:dataset_id>/leaderboard/",
        apis.LeaderboardApi.as_view(),
        name="api_leaderboard",
    ),
    path(
        "datasets/<int:dataset_id>/verdicts/import/",
        apis.VerdictImportApi.as_view(),
        name="api_verdict_import",
    ),
    path(
        "datasets/<int:dataset_id>/responses/import/",
        apis.ResponseImportApi.as_view(),
        name="api_response_import",
    ),
    path(
        "datasets/<int:dataset_id>/responses/inspect/",
        apis.ResponseInspectApi.as_view(),
        name="api_response_inspect",
    ),
]
urlpatterns += [path("", include("judging.audit.api_urls"))]  # type: ignore[list-item]
