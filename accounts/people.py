"""People for leads: their roles, their datasets, their activation; and what the People page
reads of them.

A person's site role is a set of role groups (``core.roles``): ``lead`` sees every dataset,
``annotator`` and ``auditor`` work in the datasets of their memberships, in the roles each
membership holds (``annotation``'s per-dataset roles). Every change is a line of the access
log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from allauth.socialaccount.models import SocialAccount
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Prefetch
from django.utils.translation import gettext as _
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.authtoken.models import Token

from accounts import access_log
from accounts.models import AccessEventKind, InvitedRole
from annotation import services as annotation_services
from annotation.models import Dataset, DatasetMembership
from core.roles import ANNOTATOR, AUDITOR, LEAD, ROLES
from judging import selectors as judging_selectors
from review import selectors as review_selectors

if TYPE_CHECKING:
    import datetime as dt

    from django.http import HttpRequest

MEMBER_ROLES = frozenset({ANNOTATOR, AUDITOR})
NO_ACCESS = "none"
# The site roles a lead picks from on the People page, as one choice.
SITE_ROLE_CHOICES = (ANNOTATOR, AUDITOR, InvitedRole.BOTH.value, LEAD, NO_ACCESS)


def roles_of_choice(choice: str) -> frozenset[str]:
    """The role names of a site role choice (``SITE_ROLE_CHOICES``, or an invited role)."""
    if choice == InvitedRole.BOTH:
        return MEMBER_ROLES
    if choice == NO_ACCESS:
        return frozenset()
    if choice not in ROLES:
        raise ValidationError(_("Unknown role “%(role)s”.") % {"role": choice}, code="unknown_role")
    return frozenset({choice})


def _roles(person: User) -> frozenset[str]:
    return frozenset(person.groups.filter(name__in=ROLES).values_list("name", flat=True))


def _set_roles(person: User, roles: frozenset[str]) -> None:
    for name in ROLES:
        group = Group.objects.get_or_create(name=name)[0]
        if name in roles:
            person.groups.add(group)
        else:
            person.groups.remove(group)
    if hasattr(person, "_role_cache"):
        del person._role_cache


def _active_leads() -> int:
    users = get_user_model().objects.filter(is_active=True)
    return (
        users.filter(groups__name=LEAD).distinct().count()
        + users.filter(is_superuser=True).exclude(groups__name=LEAD).count()
    )


def _is_lead(person: User) -> bool:
    return person.is_superuser or person.groups.filter(name=LEAD).exists()


def _refuse_losing_the_last_lead(person: User) -> None:
    if person.is_active and _is_lead(person) and _active_leads() <= 1:
        raise ValidationError(
            _("%(username)s is the only active lead; make someone else a lead first.")
            % {"username": person.get_username()},
            code="last_lead",
        )


@transaction.atomic
def person_set_role(
    *, person: User, role: str, actor: User | None, request: HttpRequest | None = None
) -> frozenset[str]:
    """Give a person one site role (``SITE_ROLE_CHOICES``).

    Lead adds the lead role and keeps the member roles as they are. Annotator, auditor or both
    takes the lead role away and gives that role in every dataset of theirs. No access takes
    every role away and removes them from their datasets. Returns the roles they hold now.
    """
    wanted = roles_of_choice(role)
    before = _roles(person)
    if LEAD in before and LEAD not in wanted:
        _refuse_losing_the_last_lead(person)
        if actor is not None and actor.pk == person.pk:
            raise ValidationError(_("You cannot take away your own lead role."), code="own_lead")
    after = before | {LEAD} if role == LEAD else wanted
    memberships = list(
        DatasetMembership.objects.filter(user=person).select_related("dataset", "user")
    )
    for membership in memberships:
        if not after & MEMBER_ROLES:
            annotation_services.dataset_remove_member(
                dataset=membership.dataset, user=person, actor=actor
            )
        elif role != LEAD:
            annotation_services.dataset_add_member(
                dataset=membership.dataset, user=person, roles=after & MEMBER_ROLES, actor=actor
            )
    _set_roles(person, after)
    if after != before:
        access_log.access_event_record(
            kind=AccessEventKind.ROLE_CHANGED,
            actor=actor,
            subject=person,
            detail={"before": sorted(before), "after": sorted(after)},
            request=request,
        )
    return after


@transaction.atomic
def person_grant_roles(
    *,
    person: User,
    roles: Iterable[str],
    actor: User | None,
    request: HttpRequest | None = None,
    source: str = "",
) -> frozenset[str]:
    """Add roles to a person (an invitation or the identity provider's groups); none taken
    away. Returns the roles they hold now."""
    before = _roles(person)
    after = before | (frozenset(roles) & set(ROLES))
    if after != before:
        _set_roles(person, after)
        access_log.access_event_record(
            kind=AccessEventKind.ROLE_CHANGED,
            actor=actor,
            subject=person,
            detail={"before": sorted(before), "after": sorted(after), "source": source},
            request=request,
        )
    return after


@transaction.atomic
def person_deactivate(*, person: User, actor: User, request: HttpRequest | None = None) -> None:
    """Deactivate a person who left: their sessions and token stop at once (the session's
    user and the token's are checked active on every request; the token is also deleted),
    their password no longer signs them in; their reviews, ratings and history stay."""
    if person.pk == actor.pk:
        raise ValidationError(_("You cannot deactivate yourself."), code="self")
    if not person.is_active:
        Token.objects.filter(user=person).delete()  # whatever made one since
        return
    _refuse_losing_the_last_lead(person)
    get_user_model().objects.filter(pk=person.pk).update(is_active=False)
    person.is_active = False
    Token.objects.filter(user=person).delete()
    access_log.access_event_record(
        kind=AccessEventKind.DEACTIVATED, actor=actor, subject=person, request=request
    )


@transaction.atomic
def person_reactivate(*, person: User, actor: User, request: HttpRequest | None = None) -> None:
    if person.is_active:
        return
    get_user_model().objects.filter(pk=person.pk).update(is_active=True)
    person.is_active = True
    access_log.access_event_record(
        kind=AccessEventKind.REACTIVATED, actor=actor, subject=person, request=request
    )


def person_add_to_dataset(
    *, person: User, dataset: Dataset, roles: Iterable[str], actor: User
) -> DatasetMembership:
    """Add a person to a dataset (or change their role there) in member roles."""
    if not person.is_active:
        raise ValidationError(
            _("%(username)s is deactivated; reactivate them first.")
            % {"username": person.get_username()},
            code="inactive",
        )
    return annotation_services.dataset_add_member(
        dataset=dataset, user=person, roles=frozenset(roles), actor=actor
    )


def person_remove_from_dataset(*, person: User, dataset: Dataset, actor: User) -> None:
    annotation_services.dataset_remove_member(dataset=dataset, user=person, actor=actor)


@dataclass(frozen=True)
class PersonDataset:
    dataset: Dataset
    roles: frozenset[str]


@dataclass
class Person:
    """One row of the People page."""

    user: User
    roles: frozenset[str]
    datasets: list[PersonDataset] = field(default_factory=list)
    last_login: dt.datetime | None = None
    reviews: int = 0
    ratings: int = 0
    second_factor: bool = False
    single_sign_on: bool = False

    @property
    def no_access(self) -> bool:
        return not self.roles


def people_list(*, active: bool | None = None) -> list[Person]:
    """Everyone on the site by username with their roles, datasets (and roles in each), last
    sign-in, reviews and audit ratings done, second factor and single sign-on; a fixed number
    of queries whatever the number of people."""
    users = (
        get_user_model()
        .objects.order_by("username")
        .prefetch_related(
            Prefetch("groups", queryset=Group.objects.filter(name__in=ROLES)),
            Prefetch(
                "memberships",
                queryset=DatasetMembership.objects.select_related("dataset").order_by(
                    "dataset__name"
                ),
            ),
        )
    )
    if active is not None:
        users = users.filter(is_active=active)
    people = list(users)
    ids = [p.pk for p in people]
    reviews = review_selectors.reviews_done_by(user_ids=ids)
    ratings = judging_selectors.ratings_done_by(user_ids=ids)
    with_totp = set(
        TOTPDevice.objects.filter(user_id__in=ids, confirmed=True).values_list("user_id", flat=True)
    )
    with_sso = set(SocialAccount.objects.filter(user_id__in=ids).values_list("user_id", flat=True))
    rows = []
    for person in people:
        names = frozenset(g.name for g in person.groups.all())
        if person.is_superuser:
            names |= {LEAD}
        datasets = [
            PersonDataset(m.dataset, annotation_services.member_roles(m))
            for m in person.memberships.all()
        ]
        rows.append(
            Person(
                user=person,
                roles=names,
                datasets=datasets,
                last_login=person.last_login,
                reviews=reviews.get(person.pk, 0),
                ratings=ratings.get(person.pk, 0),
                second_factor=person.pk in with_totp,
                single_sign_on=person.pk in with_sso,
            )
        )
    return rows


def person_get(*, user_id: int) -> User | None:
    return get_user_model().objects.filter(pk=user_id).first()


def has_access(user: Any) -> bool:
    """Whether a signed-in person may see anything: a role, or a dataset."""
    if user.is_superuser:
        return True
    if user.groups.filter(name__in=ROLES).exists():
        return True
    return bool(DatasetMembership.objects.filter(user=user).exists())
