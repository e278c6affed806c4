"""The lead's pages about people: People (roles, datasets, activation), Invitations, and the
access log; and the page an invitation's link opens."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts import access_log, invitations, people, second_factor, sign_in, sso
from accounts.forms import (
    SITE_ROLE_LABELS,
    AcceptForm,
    AccessFilterForm,
    InviteForm,
    PersonDatasetForm,
    PersonRoleForm,
)
from accounts.models import Invitation, InvitationState
from annotation.forms import MEMBER_ROLE_CHOICES, choice_of_roles, roles_of_choice
from annotation.models import Dataset
from core.roles import ANNOTATOR, AUDITOR, LEAD, request_user, require_lead

LEADS_ONLY = gettext_lazy("Only project leads may manage people.")
ROLE_LABELS = {
    ANNOTATOR: gettext_lazy("Annotator"),
    AUDITOR: gettext_lazy("Auditor"),
    LEAD: gettext_lazy("Lead"),
}
LOG_PAGE = 100


def _lead(request: HttpRequest) -> User:
    require_lead(request, LEADS_ONLY)
    return request_user(request)


def _person(user_id: int) -> User:
    person = people.person_get(user_id=user_id)
    if person is None:
        raise Http404(_("No such person."))
    return person


def _errors(request: HttpRequest, exc: ValidationError) -> None:
    for message in exc.messages:
        messages.error(request, message)


def _role_names(roles: frozenset[str]) -> list[str]:
    return [str(ROLE_LABELS[r]) for r in (LEAD, ANNOTATOR, AUDITOR) if r in roles]


def _site_choice(roles: frozenset[str]) -> str:
    if LEAD in roles:
        return LEAD
    return choice_of_roles(roles & people.MEMBER_ROLES) or people.NO_ACCESS


@require_GET
def people_page(request: HttpRequest) -> HttpResponse:
    """Everyone with their roles, datasets, last sign-in and work done, and what a lead can
    change of each."""
    _lead(request)
    rows = [
        {
            "person": person,
            "roles": _role_names(person.roles),
            "choice": _site_choice(person.roles),
            "datasets": [
                (d.dataset, ", ".join(_role_names(d.roles)), choice_of_roles(d.roles))
                for d in person.datasets
            ],
        }
        for person in people.people_list()
    ]
    return render(
        request,
        "accounts/people.html",
        {
            "rows": rows,
            "site_roles": SITE_ROLE_LABELS,
            "member_roles": MEMBER_ROLE_CHOICES,
            "datasets": Dataset.objects.filter(archived=False).order_by("name"),
        },
    )


@require_POST
def person_role(request: HttpRequest, user_id: int) -> HttpResponse:
    lead = _lead(request)
    person = _person(user_id)
    form = PersonRoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose a role from the list."))
        return redirect("accounts:people")
    try:
        people.person_set_role(
            person=person, role=form.cleaned_data["role"], actor=lead, request=request
        )
    except ValidationError as exc:
        _errors(request, exc)
    else:
        messages.success(
            request, _("%(username)s's role was changed.") % {"username": person.get_username()}
        )
    return redirect("accounts:people")


@require_POST
def person_dataset(request: HttpRequest, user_id: int) -> HttpResponse:
    """Add a person to a dataset, change their role in it, or (``remove``) take them out."""
    lead = _lead(request)
    person = _person(user_id)
    remove = request.POST.get("remove", "")
    if remove:
        dataset = Dataset.objects.filter(pk=int(remove)).first() if remove.isdigit() else None
        if dataset is None:
            raise Http404(_("No such dataset."))
        people.person_remove_from_dataset(person=person, dataset=dataset, actor=lead)
        messages.success(
            request,
            _("%(username)s was removed from %(dataset)s.")
            % {"username": person.get_username(), "dataset": dataset.name},
        )
        return redirect("accounts:people")
    form = PersonDatasetForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose a dataset and a role."))
        return redirect("accounts:people")
    dataset = form.cleaned_data["dataset"]
    try:
        people.person_add_to_dataset(
            person=person,
            dataset=dataset,
            roles=roles_of_choice(form.cleaned_data["role"]),
            actor=lead,
        )
    except ValidationError as exc:
        _errors(request, exc)
    else:
        messages.success(
            request,
            _("%(username)s's role in %(dataset)s is saved.")
            % {"username": person.get_username(), "dataset": dataset.name},
        )
    return redirect("accounts:people")


@require_POST
def person_activation(request: HttpRequest, user_id: int) -> HttpResponse:
    """Deactivate (``active=0``) or reactivate (``active=1``) a person."""
    lead = _lead(request)
    person = _person(user_id)
    try:
        if request.POST.get("active") == "1":
            people.person_reactivate(person=person, actor=lead, request=request)
            messages.success(
                request, _("%(username)s is active again.") % {"username": person.get_username()}
            )
        else:
            people.person_deactivate(person=person, actor=lead, request=request)
            messages.success(
                request,
                _("%(username)s is deactivated: their sessions and API token no longer work.")
                % {"username": person.get_username()},
            )
    except ValidationError as exc:
        _errors(request, exc)
    return redirect("accounts:people")


@require_POST
def person_second_factor_reset(request: HttpRequest, user_id: int) -> HttpResponse:
    """Turn off the second factor of someone who lost their phone and recovery codes."""
    lead = _lead(request)
    person = _person(user_id)
    if second_factor.second_factor_remove(user=person, actor=lead, request=request):
        messages.success(
            request,
            _(
                "%(username)s's second factor is off; they set up a new one from their "
                "security page."
            )
            % {"username": person.get_username()},
        )
    return redirect("accounts:people")


def _base_url(request: HttpRequest) -> str:
    return request.build_absolute_uri("/").rstrip("/")


def _report_sent(request: HttpRequest, sent: list[invitations.Sent]) -> None:
    failed = [s for s in sent if s.error]
    done = len(sent) - len(failed)
    if done:
        messages.success(
            request,
            ngettext("%(n)d invitation was sent.", "%(n)d invitations were sent.", done)
            % {"n": done},
        )
    for result in failed:
        messages.error(
            request,
            _("The invitation of %(email)s was not sent (%(error)s): copy its link from the list.")
            % {"email": result.invitation.email, "error": result.error},
        )


@require_http_methods(["GET", "POST"])
def invitations_page(request: HttpRequest) -> HttpResponse:
    """Invite people (one or many addresses, a role, the datasets they join), and every
    invitation with its state, link, and what can still be done with it."""
    lead = _lead(request)
    form = InviteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            made = invitations.invitations_create(
                emails=form.cleaned_data["emails"],
                role=form.cleaned_data["role"],
                datasets=form.cleaned_data["datasets"],
                actor=lead,
                request=request,
            )
        except ValidationError as exc:
            for message in exc.messages:
                form.add_error(None, message)
        else:
            _report_sent(
                request, invitations.invitations_send(invitations=made, base_url=_base_url(request))
            )
            return redirect("accounts:invitations")
    now = timezone.now()
    rows = [
        {
            "invitation": invitation,
            "state": state,
            "open": state in (InvitationState.PENDING, InvitationState.EXPIRED),
            "link": request.build_absolute_uri(invitations.invitation_path(invitation))
            if state == InvitationState.PENDING
            else "",
        }
        for invitation, state in invitations.invitation_list(now=now)
    ]
    return render(
        request,
        "accounts/invitations.html",
        {"form": form, "rows": rows, "days": settings.INVITATION_DAYS},
        status=400 if form.errors else 200,
    )


def _invitation(invitation_id: int) -> Invitation:
    invitation = invitations.invitation_get(invitation_id=invitation_id)
    if invitation is None:
        raise Http404(_("No such invitation."))
    return invitation


@require_POST
def invitation_resend(request: HttpRequest, invitation_id: int) -> HttpResponse:
    lead = _lead(request)
    try:
        invitation = invitations.invitation_renew(
            invitation=_invitation(invitation_id), actor=lead, request=request
        )
    except ValidationError as exc:
        _errors(request, exc)
    else:
        _report_sent(
            request,
            invitations.invitations_send(invitations=[invitation], base_url=_base_url(request)),
        )
    return redirect("accounts:invitations")


@require_POST
def invitation_revoke(request: HttpRequest, invitation_id: int) -> HttpResponse:
    lead = _lead(request)
    try:
        invitation = invitations.invitation_revoke(
            invitation=_invitation(invitation_id), actor=lead, request=request
        )
    except ValidationError as exc:
        _errors(request, exc)
    else:
        messages.success(
            request,
            _("The invitation of %(email)s is revoked: its link no longer works.")
            % {"email": invitation.email},
        )
    return redirect("accounts:invitations")


@login_not_required
@sensitive_post_parameters("password1", "password2")
@require_http_methods(["GET", "POST"])
def invitation_accept(request: HttpRequest, invitation_id: int, secret: str) -> HttpResponse:
    """The page an invitation's link opens: choose a username and a password (or sign in
    through single sign-on), then land on one's work. A link that is unknown, expired,
    revoked or used says so and changes nothing."""
    try:
        invitation = invitations.invitation_check(
            invitation_id=invitation_id, secret=secret, request=request
        )
    except invitations.InvitationRefused as exc:
        return render(
            request, "accounts/invitation_refused.html", {"reasons": exc.messages}, status=410
        )
    suggested = invitation.email.split("@", 1)[0]
    form = AcceptForm(request.POST or None, initial={"username": suggested})
    if request.method == "POST" and form.is_valid():
        try:
            user = invitations.invitation_accept(
                invitation=invitation,
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
                request=request,
            )
        except invitations.InvitationRefused as exc:
            return render(
                request, "accounts/invitation_refused.html", {"reasons": exc.messages}, status=410
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                for error in errors:
                    form.add_error(field if field in form.fields else None, error)
        else:
            step = sign_in.second_step(user)
            backend = "django.contrib.auth.backends.ModelBackend"
            if step is not None:
                sign_in.pending_start(request, user=user, backend=backend, next_url="", step=step)
                messages.info(request, _("Welcome! As a lead, set up your second factor first."))
                return redirect("accounts:second_factor_set_up")
            sign_in.sign_in_complete(request, user=user, backend=backend, method="invitation")
            messages.success(request, _("Welcome! Your account is ready."))
            return redirect(sign_in.landing_url(user))
    return render(
        request,
        "accounts/invitation_accept.html",
        {
            "form": form,
            "invitation": invitation,
            "secret": secret,
            "role": invitation.get_role_display(),
            "datasets": list(invitation.datasets.all()),
            "sso_name": settings.OIDC_PROVIDER_NAME if sso.sso_enabled() else "",
        },
        status=400 if form.errors else 200,
    )


@require_GET
def access_log_page(request: HttpRequest) -> HttpResponse:
    """The access log, newest first, filtered by what, who and when; a page at a time."""
    _lead(request)
    form = AccessFilterForm(request.GET or None)
    chosen = access_log.AccessFilter()
    if form.is_valid():
        data = form.cleaned_data
        chosen = access_log.AccessFilter(
            kind=data.get("kind") or "",
            person=(data.get("person") or "").strip(),
            since=data.get("since"),
            until=data.get("until"),
        )
    page = Paginator(access_log.access_events(filter=chosen), LOG_PAGE).get_page(
        request.GET.get("page")
    )
    for event in page.object_list:
        event.described = access_log.describe(event)
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "accounts/access_log.html",
        {"form": form, "page": page, "query": query.urlencode()},
        status=400 if form.errors else 200,
    )
