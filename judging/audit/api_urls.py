"""API routes of the calibration audit (included by judging.api_urls)."""

from django.urls import URLPattern, URLResolver, path

from judging.audit import apis

urlpatterns: list[URLPattern | URLResolver] = [
    path("audit-sets/<int:audit_set_id>/", apis.AuditSetStatusApi.as_view(), name="api_audit_set"),
    path(
        "audit-sets/<int:audit_set_id>/statistics/",
        apis.AuditStatisticsApi.as_view(),
        name="api_audit_statistics",
    ),
    path(
        "audit-sets/<int:audit_set_id>/claim/", apis.AuditClaimApi.as_view(), name="api_audit_claim"
    ),
    path(
        "audit-sets/<int:audit_set_id>/retry/",
        apis.AuditSetRetryApi.as_view(),
        name="api_audit_set_retry",
    ),
    path("audit-ratings/", apis.AuditRatingCreateApi.as_view(), name="api_audit_ratings"),
]
