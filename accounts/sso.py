"""Single sign-on through OpenID Connect, by django-allauth's social accounts (its public
adapter hooks): the provider's groups give site roles (``OIDC_GROUP_ROLES``), a person
without a mapped group gets no access until a lead grants it, an invitation followed into
single sign-on gives its role and datasets, and every refusal is said and logged.

Nobody signs up by themselves: allauth's local accounts stay closed (``SOCIALACCOUNT_ONLY``),
password sign-in is Django's own (``accounts.sign_in_views``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.adapter import get_adapter as get_social_adapter
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.utils.translation import gettext as _

from accounts import access_log, invitations, people
from accounts.models import AccessEventKind
from accounts.sign_in import landing_url
from core.roles import ROLES

if TYPE_CHECKING:
    from allauth.socialaccount.models import SocialLogin
    from django.contrib.auth.models import User
    from django.http import HttpRequest, HttpResponse

PROVIDER_ID = "sso"
INVITATION_KEY = "accounts_sso_invitation"


def sso_enabled() -> bool:
    return bool(settings.OIDC_ISSUER)


def sso_provider(request: HttpRequest) -> Any:
    """The configured identity provider (allauth's OpenID Connect provider)."""
    return get_social_adapter().get_provider(request, PROVIDER_ID)


def claims_of(sociallogin: SocialLogin) -> dict[str, Any]:
    """The identity's claims: the user info, else the ID token (as allauth keeps them)."""
    data = sociallogin.account.extra_data or {}
    picked = data.get("userinfo") or data.get("id_token") or data
    return dict(picked) if isinstance(picked, dict) else {}


def mapped_roles(claims: dict[str, Any]) -> tuple[frozenset[str], list[str]]:
    """The site roles of the identity's groups (``OIDC_GROUP_ROLES``), and its groups."""
    raw = claims.get(settings.OIDC_GROUPS_CLAIM) or []
    groups = [raw] if isinstance(raw, str) else [str(g) for g in raw if isinstance(g, str | int)]
    mapping = {str(k): str(v) for k, v in settings.OIDC_GROUP_ROLES.items()}
    roles: set[str] = set()
    for group in groups:
        role = mapping.get(group)
        if role == "both":
            roles |= people.MEMBER_ROLES
        elif role in ROLES:
            roles.add(role)
    return frozenset(roles), groups


def sso_signed_in(request: HttpRequest, user: User, sociallogin: SocialLogin) -> None:
    """After a single sign-on: the mapped roles, a pending invitation, the access log."""
    claims = claims_of(sociallogin)
    roles, groups = mapped_roles(claims)
    if roles:
        people.person_grant_roles(
            person=user, roles=roles, actor=None, request=request, source="single sign-on"
        )
    pending = request.session.pop(INVITATION_KEY, None)
    try:
        if isinstance(pending, dict):
            invitation = invitations.invitation_check(
                invitation_id=int(pending.get("id", 0)),
                secret=str(pending.get("secret", "")),
                request=request,
            )
            invitations.invitation_accept_as(invitation=invitation, user=user, request=request)
        elif claims.get("email_verified") is True and claims.get("email"):
            # The provider vouches for the address: its pending invitation is this person's.
            found = invitations.invitation_pending_for(email=str(claims["email"]))
            if found is not None:
                invitations.invitation_accept_as(invitation=found, user=user, request=request)
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
    if not people.has_access(user):
        messages.warning(
            request,
            _("You are signed in, but your account has no access yet: a lead must grant it."),
        )
    access_log.access_event_record(
        kind=AccessEventKind.SIGNED_IN,
        actor=user,
        subject=user,
        detail={"method": "single sign-on", "groups": groups[:50], "roles": sorted(roles)},
        request=request,
    )


class AccountAdapter(DefaultAccountAdapter):  # type: ignore[misc] # allauth is untyped
    """allauth's accounts: no sign-up of its own; after a single sign-on, roles and log."""

    def is_open_for_signup(self, request: HttpRequest) -> bool:
        return False

    def post_login(self, request: HttpRequest, user: Any, **kwargs: Any) -> HttpResponse:
        sociallogin = (kwargs.get("signal_kwargs") or {}).get("sociallogin")
        if sociallogin is not None:
            sso_signed_in(request, user, sociallogin)
        response: HttpResponse = super().post_login(request, user, **kwargs)
        return response

    def respond_user_inactive(self, request: HttpRequest, user: Any) -> HttpResponse:
        access_log.access_event_record(
            kind=AccessEventKind.SSO_REFUSED,
            subject=user,
            detail={"reason": "deactivated"},
            request=request,
        )
        messages.error(request, _("This account is deactivated: ask a lead to reactivate it."))
        return redirect("login")

    def get_login_redirect_url(self, request: HttpRequest) -> str:
        return landing_url(request.user)  # type: ignore[arg-type]

    def get_signup_redirect_url(self, request: HttpRequest) -> str:
        return self.get_login_redirect_url(request)


class SocialAccountAdapter(DefaultSocialAccountAdapter):  # type: ignore[misc]
    """allauth's social accounts: people arriving from the identity provider get an account
    (without a password); a provider's error is a message on the login page."""

    def is_open_for_signup(self, request: HttpRequest, sociallogin: SocialLogin) -> bool:
        return sso_enabled()

    def on_authentication_error(
        self,
        request: HttpRequest,
        provider: Any,
        error: Any = None,
        exception: Any = None,
        extra_context: Any = None,
    ) -> None:
        description = request.GET.get("error_description") or request.GET.get("error") or ""
        access_log.access_event_record(
            kind=AccessEventKind.SSO_REFUSED,
            detail={
                "error": str(error or ""),
                "provider_error": description[:500],
                "exception": str(exception or "")[:500],
            },
            request=request,
        )
        request.session.pop(INVITATION_KEY, None)
        if description:
            messages.error(
                request,
                _("The identity provider refused the sign-in: %(reason)s")
                % {"reason": description[:200]},
            )
        else:
            messages.error(
                request,
                _(
                    "Single sign-on did not complete (the identity provider's answer could not "
                    "be used). Try again, or sign in with your password."
                ),
            )
        raise ImmediateHttpResponse(redirect("login"))

    def populate_user(self, request: HttpRequest, sociallogin: SocialLogin, data: Any) -> Any:
        user = super().populate_user(request, sociallogin, data)
        if not user.username and user.email:
            user.username = user.email.split("@", 1)[0]
        return user
