"""Signing in and out of one's account: the password sign-in (Django's LoginView) and its
second step, setting up and turning off the second factor, password change and reset
(Django's views), single sign-on's start and its refusals, and the page of someone who has
no access yet."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import authenticate
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts import access_log, invitations, people, second_factor, services, sign_in, sso, themes
from accounts.forms import (
    DEACTIVATED,
    PasswordChangeWithLockoutForm,
    PasswordConfirmForm,
    SecondFactorForm,
    SetUpForm,
    SignInForm,
)
from accounts.models import AccessEventKind
from core.roles import is_lead, request_user

_BACKEND = "django.contrib.auth.backends.ModelBackend"
_SECOND_FACTOR_BACKEND = "accounts.backends.SecondFactorBackend"


def remember_language(response: HttpResponseBase, user: Any) -> None:
    """Give the response the language and theme cookies of what the user chose before."""
    theme = services.user_theme(user=user)
    if theme:
        themes.theme_cookie_set(response, theme)
    language = services.user_language(user=user)
    if language:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=365 * 24 * 3600,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,
        )


class LoginView(auth_views.LoginView):
    """Django's login: with a second factor (or one a lead must set up), the password only
    opens the second step; otherwise the person is signed in and lands on their work, in
    the language they chose before."""

    form_class = SignInForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        form = context.get("form")
        context["deactivated"] = bool(
            form is not None
            and any(e.code == DEACTIVATED for e in form.non_field_errors().as_data())
        )
        context["sso_name"] = settings.OIDC_PROVIDER_NAME if sso.sso_enabled() else ""
        return context

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        user = form.get_user()
        backend = getattr(user, "backend", _BACKEND)
        next_url = sign_in.safe_next(self.request, self.get_redirect_url())
        step = sign_in.second_step(user)
        if step is not None:
            sign_in.pending_start(
                self.request, user=user, backend=backend, next_url=next_url, step=step
            )
            if step == sign_in.VERIFY:
                return redirect("accounts:second_factor")
            return redirect("accounts:second_factor_set_up")
        sign_in.sign_in_complete(self.request, user=user, backend=backend, method="password")
        response = redirect(next_url or sign_in.landing_url(user))
        remember_language(response, user)
        return response


def _lost_pending(request: HttpRequest) -> HttpResponse:
    messages.error(request, _("Your sign-in took too long or was interrupted: sign in again."))
    return redirect("login")


@login_not_required
@sensitive_post_parameters("code")
@require_http_methods(["GET", "POST"])
def second_factor_step(request: HttpRequest) -> HttpResponse:
    """The second step of a password sign-in: a code from the authenticator app, or a
    recovery code. A wrong code is a failed sign-in (django-axes counts it and locks out)."""
    pending = sign_in.pending_get(request)
    if pending is None or pending.step != sign_in.VERIFY:
        return _lost_pending(request)
    form = SecondFactorForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = authenticate(
            request,
            username=pending.user.get_username(),
            second_factor_token=form.cleaned_data["code"],
            pending_user_id=pending.user.pk,
        )
        if user is not None:
            verified = user.second_factor  # type: ignore[attr-defined]
            sign_in.sign_in_complete(
                request,
                user=user,
                backend=_SECOND_FACTOR_BACKEND,
                method="recovery code" if verified.recovery else "second factor",
                device=verified.device,
            )
            if verified.recovery:
                left = second_factor.recovery_codes_left(user=user)
                access_log.access_event_record(
                    kind=AccessEventKind.RECOVERY_CODE_USED,
                    actor=user,
                    subject=user,
                    detail={"left": left},
                    request=request,
                )
                messages.warning(
                    request,
                    _(
                        "You signed in with a recovery code; %(n)d are left. Make new ones on "
                        "your security page if you are running out."
                    )
                    % {"n": left},
                )
            response = redirect(pending.next_url or sign_in.landing_url(user))
            remember_language(response, user)
            return response
        wait = second_factor.second_factor_wait(user=pending.user)
        if wait is not None and wait.total_seconds() > 0:
            form.add_error(
                "code",
                _("That code is not right. Wait %(s)d seconds before the next try.")
                % {"s": max(1, round(wait.total_seconds()))},
            )
        else:
            form.add_error("code", _("That code is not right."))
    return render(
        request,
        "registration/second_factor.html",
        {"form": form, "username": pending.user.get_username()},
        status=400 if form.errors else 200,
    )


@login_not_required
@sensitive_post_parameters("code")
@require_http_methods(["GET", "POST"])
def second_factor_set_up_step(request: HttpRequest) -> HttpResponse:
    """A lead's first sign-in on a site that requires the second factor: set it up, then
    they are signed in and see their recovery codes once."""
    pending = sign_in.pending_get(request)
    if pending is None or pending.step != sign_in.SET_UP:
        return _lost_pending(request)
    form = SetUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        codes = second_factor.totp_enrol_confirm(
            user=pending.user, code=form.cleaned_data["code"], request=request
        )
        if codes is not None:
            sign_in.sign_in_complete(
                request, user=pending.user, backend=pending.backend, method="password"
            )
            return render(
                request,
                "accounts/recovery_codes.html",
                {"codes": codes, "next": pending.next_url or sign_in.landing_url(pending.user)},
            )
        form.add_error("code", _("That code is not right: check the app's clock and try again."))
    return render(
        request,
        "accounts/second_factor_set_up.html",
        {
            "form": form,
            "enrolment": second_factor.totp_enrolment(user=pending.user),
            "required": True,
        },
        status=400 if form.errors else 200,
    )


@require_GET
def security(request: HttpRequest) -> HttpResponse:
    """One's sign-in settings: password, second factor and recovery codes."""
    user = request_user(request)
    return render(
        request,
        "accounts/security.html",
        {
            "has_second_factor": second_factor.has_second_factor(user),
            "recovery_left": second_factor.recovery_codes_left(user=user),
            "required": settings.REQUIRE_LEAD_2FA and is_lead(user),
            "has_password": user.has_usable_password(),
        },
    )


@sensitive_post_parameters("code")
@require_http_methods(["GET", "POST"])
def second_factor_set_up(request: HttpRequest) -> HttpResponse:
    """Turn the second factor on: scan the code (or type the secret), confirm one code."""
    user = request_user(request)
    form = SetUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        codes = second_factor.totp_enrol_confirm(
            user=user, code=form.cleaned_data["code"], request=request
        )
        if codes is not None:
            messages.success(request, _("The second factor is on."))
            return render(
                request,
                "accounts/recovery_codes.html",
                {"codes": codes, "next": reverse_lazy("accounts:security")},
            )
        form.add_error("code", _("That code is not right: check the app's clock and try again."))
    return render(
        request,
        "accounts/second_factor_set_up.html",
        {"form": form, "enrolment": second_factor.totp_enrolment(user=user), "required": False},
        status=400 if form.errors else 200,
    )


@sensitive_post_parameters("password")
@require_POST
def second_factor_turn_off(request: HttpRequest) -> HttpResponse:
    """Turn the second factor off, with one's password (not when leads must keep it)."""
    user = request_user(request)
    if settings.REQUIRE_LEAD_2FA and is_lead(user):
        messages.error(request, _("This site requires leads to keep a second factor."))
        return redirect("accounts:security")
    form = PasswordConfirmForm(request.POST)
    checked = form.is_valid() and authenticate(
        request, username=user.get_username(), password=form.cleaned_data["password"]
    )
    if not checked:
        messages.error(request, _("That is not your password; the second factor stays on."))
        return redirect("accounts:security")
    second_factor.second_factor_remove(user=user, actor=user, request=request)
    messages.success(request, _("The second factor is off."))
    return redirect("accounts:security")


@require_POST
def recovery_codes_new(request: HttpRequest) -> HttpResponse:
    user = request_user(request)
    if not second_factor.has_second_factor(user):
        return redirect("accounts:security")
    codes = second_factor.recovery_codes_renew(user=user)
    return render(
        request,
        "accounts/recovery_codes.html",
        {"codes": codes, "next": reverse_lazy("accounts:security")},
    )


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's password change; the current password is checked as a sign-in is."""

    form_class = PasswordChangeWithLockoutForm
    success_url = reverse_lazy("accounts:security")

    def get_form_kwargs(self) -> dict[str, Any]:
        return {**super().get_form_kwargs(), "request": self.request}

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        access_log.access_event_record(
            kind=AccessEventKind.PASSWORD_CHANGED,
            actor=self.request.user,  # type: ignore[arg-type]
            subject=self.request.user,  # type: ignore[arg-type]
            request=self.request,
        )
        messages.success(self.request, _("Your password was changed."))
        return response


class PasswordResetView(auth_views.PasswordResetView):
    success_url = reverse_lazy("accounts:password_reset_done")
    email_template_name = "registration/password_reset_email.txt"
    subject_template_name = "registration/password_reset_subject.txt"


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    success_url = reverse_lazy("accounts:password_reset_complete")

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        access_log.access_event_record(
            kind=AccessEventKind.PASSWORD_RESET,
            actor=form.user,
            subject=form.user,
            request=self.request,
        )
        return response


@login_not_required
@require_POST
def sso_start(request: HttpRequest) -> HttpResponse:
    """Send the browser to the identity provider (with an invitation to accept, when the
    form came from one)."""
    if not sso.sso_enabled():
        messages.error(request, _("Single sign-on is not set up on this site."))
        return redirect("login")
    request.session.pop(sso.INVITATION_KEY, None)
    if request.POST.get("invitation"):
        try:
            invitation = invitations.invitation_check(
                invitation_id=int(request.POST["invitation"]),
                secret=request.POST.get("secret", ""),
                request=request,
            )
        except (ValueError, ValidationError) as exc:
            for message in getattr(exc, "messages", [str(exc)]):
                messages.error(request, message)
            return redirect("login")
        request.session[sso.INVITATION_KEY] = {
            "id": invitation.pk,
            "secret": request.POST.get("secret", ""),
        }
    next_url = sign_in.safe_next(request, request.POST.get("next", ""))
    provider = sso.sso_provider(request)
    response: HttpResponse = provider.redirect(request, "login", next_url=next_url or None)
    return response


@login_not_required
@require_GET
def sso_refused(request: HttpRequest, reason: str = "") -> HttpResponse:
    """Where django-allauth sends a sign-on it could not complete: the login page, saying why."""
    messages.error(
        request,
        {
            "cancelled": _("Single sign-on was cancelled."),
            "signup": _(
                "The identity provider's account could not be matched to an account here (its "
                "e-mail address belongs to another account): sign in with your password, or ask "
                "a lead."
            ),
        }.get(
            reason, _("Single sign-on did not complete. Try again, or sign in with your password.")
        ),
    )
    request.session.pop("socialaccount_sociallogin", None)
    return redirect("login")


@require_GET
def no_access(request: HttpRequest) -> HttpResponse:
    """The page of someone signed in without a role or a dataset: a lead must grant access."""
    user = request_user(request)
    if people.has_access(user):
        return redirect(sign_in.landing_url(user))
    return render(request, "accounts/no_access.html", status=403)
