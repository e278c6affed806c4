from django.contrib.auth import views as auth_views
from django.urls import URLPattern, path, reverse_lazy

from accounts import people_views, sign_in_views, views

app_name = "accounts"
urlpatterns: list[URLPattern] = [
    path("account/token/", views.api_token, name="api_token"),
    path("account/theme/", views.theme_set, name="theme"),
    path("account/security/", sign_in_views.security, name="security"),
    path(
        "account/second-factor/",
        sign_in_views.second_factor_set_up,
        name="second_factor_enable",
    ),
    path(
        "account/second-factor/off/",
        sign_in_views.second_factor_turn_off,
        name="second_factor_off",
    ),
    path("account/recovery-codes/", sign_in_views.recovery_codes_new, name="recovery_codes_new"),
    path("account/password/", sign_in_views.PasswordChangeView.as_view(), name="password_change"),
    path("login/second-factor/", sign_in_views.second_factor_step, name="second_factor"),
    path(
        "login/second-factor/set-up/",
        sign_in_views.second_factor_set_up_step,
        name="second_factor_set_up",
    ),
    path("login/sso/", sign_in_views.sso_start, name="sso_start"),
    path("password-reset/", sign_in_views.PasswordResetView.as_view(), name="password_reset"),
    path(
        "password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "password-reset/<uidb64>/<token>/",
        sign_in_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "password-reset/done/",
        auth_views.PasswordResetCompleteView.as_view(
            extra_context={"login_url": reverse_lazy("login")}
        ),
        name="password_reset_complete",
    ),
    path("welcome/", sign_in_views.no_access, name="no_access"),
    path("people/", people_views.people_page, name="people"),
    path("people/<int:user_id>/role/", people_views.person_role, name="person_role"),
    path("people/<int:user_id>/datasets/", people_views.person_dataset, name="person_dataset"),
    path(
        "people/<int:user_id>/activation/",
        people_views.person_activation,
        name="person_activation",
    ),
    path(
        "people/<int:user_id>/second-factor/reset/",
        people_views.person_second_factor_reset,
        name="person_second_factor_reset",
    ),
    path("people/invitations/", people_views.invitations_page, name="invitations"),
    path(
        "people/invitations/<int:invitation_id>/resend/",
        people_views.invitation_resend,
        name="invitation_resend",
    ),
    path(
        "people/invitations/<int:invitation_id>/revoke/",
        people_views.invitation_revoke,
        name="invitation_revoke",
    ),
    path(
        "invitations/<int:invitation_id>/<str:secret>/",
        people_views.invitation_accept,
        name="invitation_accept",
    ),
    path("people/access-log/", people_views.access_log_page, name="access_log"),
]
