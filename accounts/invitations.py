"""Invitations: a lead invites people by e-mail address in a role and into datasets; each
gets a single-use link that expires, can be revoked and sent again, and that sets a
password (or signs in through single sign-on) and lands the person on their work.

The link is ``/invitations/<id>/<secret>/``, the secret an HMAC of the invitation's nonce
under the site's key: the database holds nothing that opens an invitation, the lead's page
can show the link again at any time (for teams without e-mail), and re-sending draws a new
nonce, so the previous link stops working.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import User
from django.core import mail
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.translation import gettext as _

from accounts import access_log, people
from accounts.models import AccessEventKind, Invitation, InvitationState, InvitedRole
from annotation import services as annotation_services
from core.roles import LEAD

if TYPE_CHECKING:
    from collections.abc import Iterable

    from django.http import HttpRequest

    from annotation.models import Dataset

_SALT = "accounts.invitations"
MAX_AT_ONCE = 100


def invitation_secret(invitation: Invitation) -> str:
    """The secret of the invitation's current link."""
    return salted_hmac(_SALT, f"{invitation.pk}:{invitation.nonce}", algorithm="sha256").hexdigest()


def invitation_path(invitation: Invitation) -> str:
    return reverse(
        "accounts:invitation_accept", args=[invitation.pk, invitation_secret(invitation)]
    )


def _new_nonce() -> str:
    return secrets.token_hex(16)


def _expiry(now: dt.datetime) -> dt.datetime:
    return now + dt.timedelta(days=settings.INVITATION_DAYS)


def parse_addresses(text: str) -> list[str]:
    """The addresses of a text (one a line, or separated by commas, semicolons or spaces),
    each once, in their order."""
    seen: dict[str, str] = {}
    for part in text.replace(",", " ").replace(";", " ").split():
        seen.setdefault(part.strip().lower(), part.strip())
    return list(seen.values())


def _address_problem(email: str) -> str | None:
    try:
        validate_email(email)
    except ValidationError:
        return _("“%(email)s” is not an e-mail address.") % {"email": email}
    if get_user_model().objects.filter(email__iexact=email).exists():
        return _("“%(email)s” already has an account: add that person on the People page.") % {
            "email": email
        }
    if Invitation.objects.filter(
        email__iexact=email, accepted_at__isnull=True, revoked_at__isnull=True
    ).exists():
        return _("“%(email)s” is invited already: send that invitation again from the list.") % {
            "email": email
        }
    return None


@dataclass(frozen=True)
class Sent:
    invitation: Invitation
    error: str  # why the mail could not be sent ('' when it was)


@transaction.atomic
def invitations_create(
    *,
    emails: Iterable[str],
    role: str,
    datasets: Iterable[Dataset],
    actor: User,
    request: HttpRequest | None = None,
) -> list[Invitation]:
    """Invite every address in ``role`` into ``datasets``: all of them, or, when any address
    is wrong (not an address, one with an account, one invited already), none, with every
    address's reason. The mails are sent by :func:`invitations_send`."""
    addresses = list(emails)
    if not addresses:
        raise ValidationError(_("Give at least one e-mail address."), code="no_address")
    if len(addresses) > MAX_AT_ONCE:
        raise ValidationError(
            _("Invite at most %(n)d people at once.") % {"n": MAX_AT_ONCE}, code="too_many"
        )
    if role not in InvitedRole.values:
        raise ValidationError(_("Unknown role “%(role)s”.") % {"role": role}, code="unknown_role")
    chosen = list(datasets)
    if role != LEAD and not chosen:
        raise ValidationError(
            _("Choose the datasets an annotator or auditor joins."), code="no_dataset"
        )
    problems = [problem for email in addresses if (problem := _address_problem(email))]
    if problems:
        raise ValidationError(problems, code="bad_address")
    now = timezone.now()
    made = []
    for email in addresses:
        try:
            with transaction.atomic():
                invitation = Invitation.objects.create(
                    email=email,
                    role=role,
                    nonce=_new_nonce(),
                    created_by=actor,
                    expires_at=_expiry(now),
                )
        except IntegrityError as exc:  # invited in the same instant by another lead
            raise ValidationError(
                _("“%(email)s” is invited already: send that invitation again from the list.")
                % {"email": email},
                code="bad_address",
            ) from exc
        invitation.datasets.set(chosen)
        access_log.access_event_record(
            kind=AccessEventKind.INVITED,
            actor=actor,
            subject_name=email,
            detail={"role": role, "datasets": [d.name for d in chosen]},
            request=request,
        )
        made.append(invitation)
    return made


def invitations_send(*, invitations: list[Invitation], base_url: str) -> list[Sent]:
    """Send each invitation's mail (one connection for all) and record when, or why not.

    ``base_url`` is the site's address (``https://review.example.org``) the links start with.
    """
    results = []
    try:
        connection = mail.get_connection(fail_silently=False)
        connection.open()
    except Exception as exc:
        return [
            _record_sent(i, _("The mail server could not be reached: %s") % exc)
            for i in invitations
        ]
    try:
        for invitation in invitations:
            message = _message(invitation, base_url, connection)
            try:
                message.send()
            except Exception as exc:
                results.append(_record_sent(invitation, _("The mail was not sent: %s") % exc))
            else:
                results.append(_record_sent(invitation, ""))
    finally:
        connection.close()
    return results


def _message(invitation: Invitation, base_url: str, connection: object) -> mail.EmailMessage:
    context = {
        "invitation": invitation,
        "link": f"{base_url.rstrip('/')}{invitation_path(invitation)}",
        "role": InvitedRole(invitation.role).label,
        "datasets": [d.name for d in invitation.datasets.all()],
        "inviter": invitation.created_by.get_username(),
        "days": settings.INVITATION_DAYS,
        "expires_at": invitation.expires_at,
    }
    subject = render_to_string("accounts/invitation_subject.txt", context).strip()
    body = render_to_string("accounts/invitation_email.txt", context)
    return mail.EmailMessage(
        subject, body, settings.DEFAULT_FROM_EMAIL, [invitation.email], connection=connection
    )


def _record_sent(invitation: Invitation, error: str) -> Sent:
    if error:
        Invitation.objects.filter(pk=invitation.pk).update(send_error=error[:2000])
        invitation.send_error = error
    else:
        now = timezone.now()
        invitation.times_sent += 1
        Invitation.objects.filter(pk=invitation.pk).update(
            sent_at=now, times_sent=invitation.times_sent, send_error=""
        )
        invitation.sent_at, invitation.send_error = now, ""
    return Sent(invitation, error)


def _refuse_unless_open(invitation: Invitation, now: dt.datetime) -> None:
    state = invitation.state(now)
    if state == InvitationState.ACCEPTED:
        raise ValidationError(_("This invitation was accepted already."), code="accepted")
    if state == InvitationState.REVOKED:
        raise ValidationError(_("This invitation was revoked."), code="revoked")


@transaction.atomic
def invitation_renew(
    *, invitation: Invitation, actor: User, request: HttpRequest | None = None
) -> Invitation:
    """Give a pending or expired invitation a new link and a new expiry (the old link stops
    working); :func:`invitations_send` sends it again."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    _refuse_unless_open(invitation, timezone.now())
    if get_user_model().objects.filter(email__iexact=invitation.email).exists():
        raise ValidationError(
            _("“%(email)s” has an account now: revoke this invitation.")
            % {"email": invitation.email},
            code="has_account",
        )
    invitation.nonce = _new_nonce()
    invitation.expires_at = _expiry(timezone.now())
    invitation.save(update_fields=["nonce", "expires_at"])
    access_log.access_event_record(
        kind=AccessEventKind.INVITATION_RESENT,
        actor=actor,
        subject_name=invitation.email,
        request=request,
    )
    return invitation


@transaction.atomic
def invitation_revoke(
    *, invitation: Invitation, actor: User, request: HttpRequest | None = None
) -> Invitation:
    """Revoke a pending or expired invitation: its link stops working."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    _refuse_unless_open(invitation, timezone.now())
    invitation.revoked_at = timezone.now()
    invitation.save(update_fields=["revoked_at"])
    access_log.access_event_record(
        kind=AccessEventKind.INVITATION_REVOKED,
        actor=actor,
        subject_name=invitation.email,
        request=request,
    )
    return invitation


class InvitationRefused(ValidationError):
    """The link does not open an invitation: unknown, expired, revoked or used."""


def invitation_check(
    *, invitation_id: int, secret: str, request: HttpRequest | None = None
) -> Invitation:
    """The invitation a link opens, or :class:`InvitationRefused` saying why not (each
    refusal of a real invitation is a line of the access log)."""
    invitation = Invitation.objects.filter(pk=invitation_id).first()
    if invitation is None or not constant_time_compare(secret, invitation_secret(invitation)):
        raise InvitationRefused(
            _(
                "This invitation link is not valid: it may have been sent again since, so use the "
                "latest mail, or ask the lead for a new one."
            ),
            code="unknown",
        )
    state = invitation.state(timezone.now())
    reasons = {
        InvitationState.EXPIRED: _(
            "This invitation has expired: ask the lead who invited you to send it again."
        ),
        InvitationState.REVOKED: _("This invitation was revoked: ask a lead for a new one."),
        InvitationState.ACCEPTED: _(
            "This invitation was used already: sign in with the account it made."
        ),
    }
    if state in reasons:
        access_log.access_event_record(
            kind=AccessEventKind.INVITATION_REFUSED,
            subject_name=invitation.email,
            detail={"state": str(state)},
            request=request,
        )
        raise InvitationRefused(reasons[state], code=str(state))
    return invitation


def _welcome(invitation: Invitation, user: User, request: HttpRequest | None) -> None:
    """Give the invited person the invitation's role and datasets, and close it."""
    roles = people.roles_of_choice(invitation.role)
    people.person_grant_roles(
        person=user,
        roles=roles,
        actor=invitation.created_by,
        request=request,
        source="invitation",
    )
    member_roles = roles & people.MEMBER_ROLES
    if member_roles:
        for dataset in invitation.datasets.all():
            annotation_services.dataset_add_member(
                dataset=dataset, user=user, roles=member_roles, actor=invitation.created_by
            )
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    access_log.access_event_record(
        kind=AccessEventKind.INVITATION_ACCEPTED,
        actor=user,
        subject=user,
        detail={"email": invitation.email, "role": invitation.role},
        request=request,
    )


def _locked(invitation: Invitation) -> Invitation:
    locked = (
        Invitation.objects.select_for_update().select_related("created_by").get(pk=invitation.pk)
    )
    if locked.state(timezone.now()) != InvitationState.PENDING:
        raise InvitationRefused(
            _("This invitation was used already: sign in with the account it made."),
            code="accepted",
        )
    return locked


@transaction.atomic
def invitation_accept(
    *,
    invitation: Invitation,
    username: str,
    password: str,
    request: HttpRequest | None = None,
) -> User:
    """Make the invited person's account with the username and password they chose, in the
    invitation's role and datasets; the invitation is used up."""
    invitation = _locked(invitation)
    username = username.strip()
    user_model = get_user_model()
    if user_model.objects.filter(username__iexact=username).exists():
        raise ValidationError(
            {"username": _("“%(username)s” is taken; choose another.") % {"username": username}}
        )
    if user_model.objects.filter(email__iexact=invitation.email).exists():
        raise InvitationRefused(
            _("“%(email)s” has an account already: sign in with it.") % {"email": invitation.email},
            code="has_account",
        )
    user = user_model(username=username, email=invitation.email)
    try:
        user_model.username_validator(username)
    except ValidationError as exc:
        raise ValidationError({"username": exc.messages}) from exc
    try:
        password_validation.validate_password(password, user)
    except ValidationError as exc:
        raise ValidationError({"password1": exc.messages}) from exc
    user.set_password(password)
    user.save()
    _welcome(invitation, user, request)
    return user


@transaction.atomic
def invitation_accept_as(
    *, invitation: Invitation, user: User, request: HttpRequest | None = None
) -> None:
    """Give an invitation's role and datasets to the person who just signed in through single
    sign-on from its link; the invitation is used up."""
    _welcome(_locked(invitation), user, request)


def invitation_list(*, now: dt.datetime) -> list[tuple[Invitation, InvitationState]]:
    """Every invitation, newest first, with its state and datasets (two queries)."""
    invitations = Invitation.objects.select_related("created_by", "accepted_by").prefetch_related(
        "datasets"
    )
    return [(i, i.state(now)) for i in invitations]


def invitation_pending_for(*, email: str) -> Invitation | None:
    """The pending (open, unexpired) invitation of an address, if any."""
    return (
        Invitation.objects.filter(
            email__iexact=email,
            accepted_at__isnull=True,
            revoked_at__isnull=True,
            expires_at__gt=timezone.now(),
        )
        .order_by("-created_at")
        .first()
    )


def invitation_get(*, invitation_id: int) -> Invitation | None:
    return Invitation.objects.filter(pk=invitation_id).first()
