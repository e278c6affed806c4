"""URL routing of the whole site."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from accounts import sign_in_views
from mmooc_site import views

# The API first: its paths all start with "api/", which no page's pattern matches, and
# Django tries the patterns in order, so the review loop's calls (review's API, first) are
# found after a few tests instead of after every page's (about 100 per request before).
urlpatterns = [
    path("api/", include("review.api_urls")),
    path("api/", include("annotation.api_urls")),
    path("api/", include("judging.api_urls")),
    path("api/schema/", views.api_schema, name="api_schema"),
    path("", views.home, name="home"),
    path("formats/", views.formats, name="formats"),
    path("formats/examples/<path:name>", views.format_example, name="format_example"),
    path("login/", sign_in_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/setlang/", views.set_language, name="set_language"),
    path("healthz/", views.healthz, name="healthz"),
    path("livez/", views.livez, name="livez"),
    path("admin/", admin.site.urls),
    path("", include("accounts.urls")),
    path("sso/", include("accounts.sso_urls")),
    path("", include("annotation.urls")),
    path("", include(("review.urls", "review"), namespace="review")),
    path("", include(("judging.urls", "judging"), namespace="judging")),
    path("favicon.ico", RedirectView.as_view(url="/static/favicon.svg", permanent=True)),
]

# A database that cannot be reached is a 503, not a 500 (mmooc_site.views.server_error).
handler500 = "mmooc_site.views.server_error"
