"""The three roles of the site and what each may see.

A role is a Django group. Leads see and manage every dataset; annotators and auditors see only
the datasets they are members of. Superusers count as leads.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

ANNOTATOR = "annotator"
LEAD = "lead"
AUDITOR = "auditor"
ROLES = (ANNOTATOR, LEAD, AUDITOR)


def user_roles(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    """The role names of a user, cached on the user object for the request."""
    if not user.is_authenticated:
        return frozenset()
    cached: frozenset[str] | None = getattr(user, "_role_cache", None)
    if cached is None:
        names = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))  # type: ignore[attr-defined]
        if getattr(user, "is_superuser", False):
            names.add(LEAD)
        cached = frozenset(names)
        user._role_cache = cached  # type: ignore[attr-defined]
    return cached


def roles_remember(user: AbstractBaseUser | AnonymousUser, names: Iterable[str]) -> None:
    """Keep a user's role names, loaded with the user (token authentication does), so that
    ``user_roles`` needs no query."""
    roles = set(names) & set(ROLES)
    if getattr(user, "is_superuser", False):
        roles.add(LEAD)
    user._role_cache = frozenset(roles)  # type: ignore[union-attr]


def acting_user(user: AbstractBaseUser | AnonymousUser) -> User | None:
    """The signed-in user as the services expect it (None for anonymous)."""
    return user if isinstance(user, User) else None


def is_lead(user: AbstractBaseUser | AnonymousUser) -> bool:
    return LEAD in user_roles(user)


def is_auditor(user: AbstractBaseUser | AnonymousUser) -> bool:
    return AUDITOR in user_roles(user) or is_lead(user)


def is_annotator(user: AbstractBaseUser | AnonymousUser) -> bool:
    return ANNOTATOR in user_roles(user)


def is_reviewer(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Who may claim, draft and submit review work: annotators (and leads, who may do all).

    An auditor who is not also an annotator may not: the audit's human ratings must come
    from people who did not settle the same samples in review.
    """
    return ANNOTATOR in user_roles(user) or is_lead(user)


def sees_judge_votes(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether the sample API may hand this user judge-derived data (votes, the disagreement
    flag). Only leads: reviewers see hints on the review page when the dataset allows them,
    and auditors must rate before they learn what the judges said."""
    return is_lead(user)


def request_user(request: HttpRequest) -> User:
    """The signed-in user of a request (views and APIs behind a login); 403 for anyone else."""
    user = acting_user(request.user)
    if user is None:
        raise PermissionDenied(_("Sign in first."))
    return user


def require_lead(request: HttpRequest, message: str | Promise | None = None) -> None:
    """Refuse (403, with the reason) a request that is not a project lead's."""
    if not is_lead(request.user):
        raise PermissionDenied(message or _("Only project leads may do this."))


REVIEWERS_ONLY = _("Only annotators may claim or submit review work.")


def require_reviewer(request: HttpRequest) -> None:
    """Refuse (403, with the reason) a request of someone who may not do review work."""
    if not is_reviewer(request.user):
        raise PermissionDenied(REVIEWERS_ONLY)
