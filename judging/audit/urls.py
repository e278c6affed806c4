"""Pages of the calibration audit (included by judging.urls, in the "judging" namespace)."""

from django.urls import URLPattern, URLResolver, path

from judging.audit import ahead_views, views

urlpatterns: list[URLPattern | URLResolver] = [
    path("datasets/<int:dataset_id>/audits/", views.audit_list, name="audit_list"),
    path("datasets/<int:dataset_id>/audits/new/", views.audit_new, name="audit_new"),
    path("audits/<int:audit_set_id>/", views.audit_detail, name="audit_detail"),
    path("audits/<int:audit_set_id>/next/", views.audit_next, name="audit_next"),
    path("audits/<int:audit_set_id>/retry/", views.audit_retry, name="audit_retry"),
    path("audits/<int:audit_set_id>/statistics/", views.audit_statistics, name="audit_statistics"),
    path(
        "audits/<int:audit_set_id>/statistics.csv",
        views.audit_statistics_csv,
        name="audit_statistics_csv",
    ),
    path("audits/<int:audit_set_id>/report/", views.audit_report, name="audit_report"),
    path("audit-items/<int:item_id>/rate/", views.audit_rate, name="audit_rate"),
    path("audit-items/<int:item_id>/submit/", views.audit_submit, name="audit_submit"),
    path("audits/<int:audit_set_id>/ahead/", ahead_views.audit_ahead, name="audit_ahead"),
    path("audit-ahead/take/", ahead_views.audit_ahead_take, name="audit_ahead_take"),
    path("audit-ahead/release/", ahead_views.audit_ahead_release, name="audit_ahead_release"),
]
