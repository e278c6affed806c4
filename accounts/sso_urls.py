"""django-allauth's URLs that single sign-on needs: the provider's callback (and its own
start, unused by the pages, which start at ``accounts:sso_start``), and the names allauth's
flows redirect to, each answered by this site's own pages."""

from django.urls import URLPattern, URLResolver, include, path
from django.views.generic import RedirectView

from accounts import sign_in_views

urlpatterns: list[URLPattern | URLResolver] = [
    path("", include("allauth.socialaccount.providers.openid_connect.urls")),
    path("login/", RedirectView.as_view(pattern_name="login"), name="account_login"),
    path("logout/", RedirectView.as_view(pattern_name="login"), name="account_logout"),
    path(
        "inactive/",
        sign_in_views.sso_refused,
        {"reason": "inactive"},
        name="account_inactive",
    ),
    path("signup/", sign_in_views.sso_refused, {"reason": "signup"}, name="socialaccount_signup"),
    path(
        "cancelled/",
        sign_in_views.sso_refused,
        {"reason": "cancelled"},
        name="socialaccount_login_cancelled",
    ),
    path("error/", sign_in_views.sso_refused, name="socialaccount_login_error"),
]
